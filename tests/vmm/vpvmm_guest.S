/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The guest program of vpvmm: arm64 code entered at EL1 with the MMU off,
 * x0 the vCPU's mailbox (phase kind, count), x5 its MMIO doorbell.  It is
 * position independent and copied into the guest's memory 2 KiB aligned,
 * VBAR_EL1 pointing at guest_vectors (set by the VMM).
 *
 * Per phase, with the instructions each retires (EL1 unless said):
 *
 *   top:   str  xzr, [x5]        MMIO exit; faults to KVM, which emulates
 *                                the store and skips it: not retired
 *          ldr  x1, [x0]         phase kind                            1
 *          ldr  x2, [x0, #8]     its count N                           2
 *          cmp  x1, #GUEST_HALT                                        3
 *          b.eq halt                                                   4
 *          b.hi user                                                   5
 *   loop:  subs x2, x2, #1       N times                              2N
 *          b.ne loop
 *          b    top                                                    1
 *   halt:  wfi                                                         1
 *          b    top                                                    1
 *   user:  cmp  x1, #GUEST_HVC                                         1
 *          b.eq hvc                                                    2
 *          adr  x3, el0                                                3
 *          mov  x4, #SPSR_EL0T   EL0t, interrupts masked               4
 *          msr  elr_el1, x3                                            5
 *          msr  spsr_el1, x4                                           6
 *          eret                                                        7
 *   el0:   subs x2, x2, #1       N times, at EL0                 EL0  2N
 *          b.ne el0
 *          svc  #0               to the EL1 vector               EL0   1
 *   vectors + 0x400 (synchronous exception from a lower EL):
 *          b    top                                                    1
 *   hvc:   mov  x6, x0           the mailbox: HVC returns in x0-x3     1
 *          mov  x7, x2                                                 2
 *   hvc1:  movz w0, SMCCC_VERSION  N times: KVM answers in the kernel  4N
 *          hvc  #0
 *          subs x7, x7, #1
 *          b.ne hvc1
 *          mov  x0, x6                                                 3
 *          b    top                                                    4
 *
 * So a loop phase retires 2N + 6 at EL1, a halt phase 6, a user phase
 * 2N + 1 at EL0 and 13 at EL1, a hypercall phase 4N + 11 at EL1
 * (vpvmm_guest.h).  Each HVC is an exit to KVM, which answers
 * SMCCC_VERSION itself and returns to the next instruction.  The WFI is counted:
 * trapped to KVM (HCR_EL2.TWI), hardware would not retire it, but QEMU's
 * instruction counter (-icount) has counted it when the trap is taken (the
 * exception is raised from the instruction's helper without rewinding the
 * count), and an untrapped WFI retires anyway.  SVC and ERET retire before their
 * exception level changes, so each counts at the level it executed at.
 * Measured on the bed: every figure exact (tests/integration/kvm.py).
 */
#include "vpvmm_guest.h"

#define SPSR_EL0T	0x3c0	/* M = EL0t, D, A, I, F masked */
#define VEC_LOWER_SYNC	0x400	/* synchronous, lower EL, AArch64 */
#define SMCCC_VERSION	0x80000000	/* SMCCC_VERSION: answered by KVM */

	.section .rodata
	.balign	VBAR_ALIGN
	.globl	guest_code
guest_code:
top:	str	xzr, [x5]
	ldr	x1, [x0]
	ldr	x2, [x0, #8]
	cmp	x1, #GUEST_HALT
	b.eq	halt
	b.hi	user
loop:	subs	x2, x2, #1
	b.ne	loop
	b	top
halt:	wfi
	b	top
user:	cmp	x1, #GUEST_HVC
	b.eq	hvc
	adr	x3, el0
	mov	x4, #SPSR_EL0T
	msr	elr_el1, x3
	msr	spsr_el1, x4
	eret
el0:	subs	x2, x2, #1
	b.ne	el0
	svc	#0
hvc:	mov	x6, x0
	mov	x7, x2
hvc1:	movz	w0, #(SMCCC_VERSION >> 16), lsl #16
	hvc	#0
	subs	x7, x7, #1
	b.ne	hvc1
	mov	x0, x6
	b	top

	.balign	VBAR_ALIGN
	.globl	guest_vectors
guest_vectors:
	.skip	VEC_LOWER_SYNC
	b	top

	.balign	128
	.globl	guest_code_end
guest_code_end:
	.section .note.GNU-stack, "", %progbits
