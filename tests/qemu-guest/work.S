/* SPDX-License-Identifier: GPL-2.0 */
/*
 * work: the user-mode workload of the real QEMU guest (arm64-check.sh):
 * a static program without a C library that retires exactly
 * 2 * WORK_ITERS + 4 instructions in user mode (ldr, the loop, three to
 * exit; the SVC retires at EL0) and exits 0.
 */
	.text
	.globl	_start
_start:
	ldr	x0, =WORK_ITERS
1:	subs	x0, x0, #1
	b.ne	1b
	mov	x0, #0			/* status */
	mov	x8, #93			/* __NR_exit */
	svc	#0
	.section .note.GNU-stack, "", %progbits
