/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the vcpuperf fuzz harnesses.  A broken invariant
 * prints what broke and aborts, which libFuzzer reports as a crash and
 * saves the input for.
 */
#ifndef _VCPUPERF_FUZZ_COMMON_H
#define _VCPUPERF_FUZZ_COMMON_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/*
 * Where broken invariants are reported: a copy of stderr taken before
 * libFuzzer runs, so that -close_fd_mask=2 (which scripts/fuzz.sh uses
 * to silence the decoder's own warnings) does not swallow them.
 */
static FILE *fz_report;

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	int fd = dup(2);

	(void)argc;
	(void)argv;
	fz_report = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!fz_report)
		fz_report = stderr;
	setvbuf(fz_report, NULL, _IONBF, 0);
	return 0;
}

#define FZ_CHECK(cond, ...)						\
	do {								\
		if (!(cond)) {						\
			FILE *fz_fp = fz_report ? fz_report : stderr;	\
									\
			fprintf(fz_fp, "invariant broken at %s:%d: %s: ", \
				__FILE__, __LINE__, #cond);		\
			fprintf(fz_fp, __VA_ARGS__);			\
			fputc('\n', fz_fp);				\
			abort();					\
		}							\
	} while (0)

/* NUL within @n bytes? */
static inline int fz_terminated(const char *s, size_t n)
{
	return memchr(s, '\0', n) != NULL;
}

/* Little-endian u64 at @off of the input, zero-padded past its end. */
static inline uint64_t fz_u64(const uint8_t *data, size_t size, size_t off)
{
	uint64_t v = 0;
	size_t i;

	for (i = 0; i < 8; i++)
		if (off + i < size)
			v |= (uint64_t)data[off + i] << (8 * i);
	return v;
}

#endif /* _VCPUPERF_FUZZ_COMMON_H */
