/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vpmods.h - the modifier letters of vcpuperf's event names as
 * perf_event_attr bits, for the benchmark's peers, bench/ureader.c (user
 * space) and bench/floor/vpfloor.c (a module), which count the same
 * events as vcpuperf-cat without its library.
 */
#ifndef _VP_BENCH_MODS_H
#define _VP_BENCH_MODS_H

/*
 * Set @a's exclude bits for @mods, letters of u (user only), k (kernel
 * only), G (guest only), H (host only), as lib/vcpuperf_events.c does.
 * Returns 0, or -1 for another letter.
 */
static inline int vpb_set_mods(struct perf_event_attr *a, const char *mods)
{
	for (; *mods; mods++) {
		switch (*mods) {
		case 'u':
			a->exclude_kernel = 1;
			a->exclude_hv = 1;
			break;
		case 'k':
			a->exclude_user = 1;
			a->exclude_hv = 1;
			break;
		case 'G':
			a->exclude_host = 1;
			break;
		case 'H':
			a->exclude_guest = 1;
			break;
		default:
			return -1;
		}
	}
	return 0;
}

#endif /* _VP_BENCH_MODS_H */
