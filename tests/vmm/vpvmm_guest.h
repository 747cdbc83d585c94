/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The guest program of vpvmm (vpvmm_guest.S): its code, copied to the
 * guest's memory at a 2 KiB aligned address, and the instructions each
 * phase retires.
 */
#ifndef VPVMM_GUEST_H
#define VPVMM_GUEST_H

/* Phase kinds as the guest reads them from its mailbox (x0). */
#define GUEST_LOOP	1
#define GUEST_HALT	2
#define GUEST_USER	3
#define GUEST_HVC	4

/* Instructions each phase retires besides its loop (vpvmm_guest.S). */
#define LOOP_PER_ITER	2
#define LOOP_EL1	6	/* dispatch 5, b top */
#define HALT_EL1	6	/* dispatch 4, wfi, b top */
#define USER_EL1	13	/* dispatch 7, to EL0 5, vector 1 */
#define USER_EL0	1	/* svc */
#define HVC_PER_ITER	4	/* movz, hvc, subs, b.ne */
#define HVC_EL1		11	/* dispatch 7, two movs before, two after */

/* VBAR_EL1 alignment: the vectors are that far into the code. */
#define VBAR_ALIGN	2048

#ifndef __ASSEMBLER__
#include <stdint.h>

extern const uint32_t guest_code[], guest_vectors[], guest_code_end[];
#endif

#endif /* VPVMM_GUEST_H */
