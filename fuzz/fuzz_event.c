// SPDX-License-Identifier: GPL-2.0
/*
 * Fuzz event-name resolution and the counter arithmetic shared by the
 * module and vcpuperf-cat (lib/vcpuperf_events.c, lib/vcpuperf_scale.c,
 * lib/vcpuperf_names.c).
 *
 * The input is used twice:
 *  - as text: one event (vp_parse_event) and a comma-separated list
 *    (vp_parse_event_list); each resolved event goes through
 *    vp_effective_mods() and vp_build_attr(), whose result is checked
 *    against the modifier table in include/uapi/vcpuperf.h;
 *  - as binary: little-endian u64 words (zero-padded) feed vp_mul_div(),
 *    vp_scale() and vp_count_delta(), checked against unsigned __int128
 *    arithmetic written independently here, and the error/cause/record
 *    name tables.
 */
#include "vcpuperf_lib.h"
#include "fuzz_common.h"

typedef unsigned __int128 u128;

static struct vp_event_spec evs[VCPUPERF_MAX_EVENTS];

static void check_attr(const struct vcpuperf_event_desc *desc)
{
	struct vcpuperf_event_desc eff = *desc;
	struct perf_event_attr attr;
	__u32 m;

	eff.mods = vp_effective_mods(desc->type, desc->mods);
	m = eff.mods;
	FZ_CHECK((m & ~desc->mods) == 0, "effective mods add bits");
	if (vp_is_pmu_event(desc->type))
		FZ_CHECK(m == desc->mods, "PMU event lost mods");
	else
		FZ_CHECK(m == (desc->mods & ~(VCPUPERF_MOD_GUEST |
					      VCPUPERF_MOD_HOST)),
			 "non-PMU mods %#x -> %#x", desc->mods, m);

	memset(&attr, 0xa5, sizeof(attr));
	vp_build_attr(&eff, &attr);
	FZ_CHECK(attr.size == sizeof(attr), "attr.size %u", attr.size);
	FZ_CHECK(attr.type == eff.type && attr.config == eff.config,
		 "type/config");
	FZ_CHECK(attr.read_format == (PERF_FORMAT_TOTAL_TIME_ENABLED |
				      PERF_FORMAT_TOTAL_TIME_RUNNING),
		 "read_format %#llx", (unsigned long long)attr.read_format);
	FZ_CHECK(!attr.disabled && !attr.inherit && !attr.sample_period &&
		 !attr.sample_type, "not a plain enabled counting event");
	FZ_CHECK(attr.exclude_kernel == !!(m & VCPUPERF_MOD_USER), "u");
	FZ_CHECK(attr.exclude_user == !!(m & VCPUPERF_MOD_KERNEL), "k");
	FZ_CHECK(attr.exclude_hv ==
		 !!(m & (VCPUPERF_MOD_USER | VCPUPERF_MOD_KERNEL)), "hv");
	FZ_CHECK(attr.exclude_host == !!(m & VCPUPERF_MOD_GUEST), "G");
	FZ_CHECK(attr.exclude_guest == !!(m & VCPUPERF_MOD_HOST), "H");
	FZ_CHECK(attr.pinned == !!(m & VCPUPERF_MOD_PINNED), "D");
	FZ_CHECK(!attr.exclude_idle && !attr.exclusive && !attr.freq,
		 "stray attr bits");
}

static void check_spec(const struct vp_event_spec *ev, const char *s,
		       size_t len)
{
	const struct vcpuperf_event_desc *d = &ev->desc;

	FZ_CHECK(fz_terminated(d->name, sizeof(d->name)), "unterminated");
	FZ_CHECK(len && len < VCPUPERF_NAME_LEN && strlen(d->name) == len &&
		 !memcmp(d->name, s, len), "name is not the input");
	FZ_CHECK(!(d->mods & ~VCPUPERF_MOD_ALL), "mods %#x", d->mods);
	FZ_CHECK(!((d->mods & VCPUPERF_MOD_USER) &&
		   (d->mods & VCPUPERF_MOD_KERNEL)), "u+k");
	FZ_CHECK(!((d->mods & VCPUPERF_MOD_GUEST) &&
		   (d->mods & VCPUPERF_MOD_HOST)), "G+H");
	if (ev->tracepoint) {
		size_t ls = strnlen(ev->tp_system, VP_TP_LEN);
		size_t le = strnlen(ev->tp_event, VP_TP_LEN);

		FZ_CHECK(d->type == PERF_TYPE_TRACEPOINT, "tp type");
		FZ_CHECK(ls && ls < VP_TP_LEN && le && le < VP_TP_LEN,
			 "tracepoint part lengths %zu %zu", ls, le);
		FZ_CHECK(!memcmp(s, ev->tp_system, ls) && s[ls] == ':' &&
			 !memcmp(s + ls + 1, ev->tp_event, le),
			 "tracepoint parts are not the input");
	} else {
		FZ_CHECK(!ev->tp_system[0] && !ev->tp_event[0],
			 "tracepoint names on a non-tracepoint");
	}
	check_attr(d);
}

static void check_err(int ret, const char *err, size_t errlen, bool list)
{
	FZ_CHECK(ret == 0 || ret == -EINVAL || ret == -ENOENT ||
		 (list && ret == -E2BIG), "return %d", ret);
	if (ret) {
		FZ_CHECK(fz_terminated(err, errlen), "err unterminated");
		FZ_CHECK(err[0], "empty err for %d", ret);
	}
}

static void fuzz_names(const char *s, size_t len)
{
	char err[VP_ERR_LEN];
	__u32 nr = 0xdead, i, j;
	size_t pos;
	int ret;

	memset(err, 'x', sizeof(err));
	ret = vp_parse_event(s, len, &evs[0], err, sizeof(err));
	check_err(ret, err, sizeof(err), false);
	if (!ret)
		check_spec(&evs[0], s, len);

	memset(err, 'x', sizeof(err));
	ret = vp_parse_event_list(s, len, evs, &nr, err, sizeof(err));
	check_err(ret, err, sizeof(err), true);
	if (ret) {
		FZ_CHECK(nr == 0xdead, "nr written on failure");
		return;
	}
	FZ_CHECK(nr >= 1 && nr <= VCPUPERF_MAX_EVENTS, "nr %u", nr);
	for (i = 0, pos = 0; i < nr; i++) {
		const char *item = s + pos;
		const char *comma = memchr(item, ',', len - pos);
		size_t n = comma ? (size_t)(comma - item) : len - pos;

		check_spec(&evs[i], item, n);
		for (j = 0; j < i; j++)
			FZ_CHECK(strcmp(evs[i].desc.name, evs[j].desc.name),
				 "'%s' twice", evs[i].desc.name);
		pos += n + 1;
		FZ_CHECK((i + 1 < nr) == (comma != NULL), "list count");
	}
}

static void fuzz_mul_div(__u64 a, __u64 b, __u64 c)
{
	bool ovf = false;
	__u64 q;
	u128 want;

	if (!c)
		return;		/* documented precondition */
	want = (u128)a * b / c;
	q = vp_mul_div(a, b, c, &ovf);
	if (want > (u128)~0ULL)
		FZ_CHECK(ovf && q == ~0ULL, "%llu*%llu/%llu overflows",
			 (unsigned long long)a, (unsigned long long)b,
			 (unsigned long long)c);
	else
		FZ_CHECK(!ovf && q == (__u64)want,
			 "%llu*%llu/%llu = %llu, got %llu (ovf %d)",
			 (unsigned long long)a, (unsigned long long)b,
			 (unsigned long long)c, (unsigned long long)want,
			 (unsigned long long)q, ovf);
}

static void fuzz_scale(__u64 value, __u64 enabled, __u64 running)
{
	__u64 scaled = 0x5a5a5a5a5a5a5a5aULL;
	bool ok = vp_scale(value, enabled, running, &scaled);
	u128 want;

	if (!enabled || running >= enabled) {
		FZ_CHECK(ok && scaled == value, "unscaled case");
		return;
	}
	if (!running) {
		FZ_CHECK(!ok, "estimate without running time");
		return;
	}
	want = (u128)value * enabled / running;
	if (want > (u128)~0ULL) {
		FZ_CHECK(!ok, "overflowing scale reported ok");
	} else {
		FZ_CHECK(ok && scaled == (__u64)want, "scale %llu*%llu/%llu",
			 (unsigned long long)value,
			 (unsigned long long)enabled,
			 (unsigned long long)running);
		FZ_CHECK(scaled >= value, "scaling shrank the count");
	}
}

static void fuzz_delta(const __u64 *w)
{
	struct vcpuperf_count prev = { w[0], w[1], w[2] };
	struct vcpuperf_count cur = { w[3], w[4], w[5] };
	struct vp_delta d;
	bool back;

	vp_count_delta(&prev, &cur, &d);
	back = cur.value < prev.value || cur.enabled < prev.enabled ||
	       cur.running < prev.running;
	FZ_CHECK(d.restarted == back, "restarted");
	if (back)
		FZ_CHECK(d.value == cur.value && d.enabled == cur.enabled &&
			 d.running == cur.running, "restart delta");
	else
		FZ_CHECK(d.value + prev.value == cur.value &&
			 d.enabled + prev.enabled == cur.enabled &&
			 d.running + prev.running == cur.running, "delta");
}

static void fuzz_names_tables(__u64 x, __u64 y)
{
	int err = (int)(__u32)x;
	enum vcpuperf_cause c;
	const char *s;

	s = vp_errno_name(err);
	FZ_CHECK(s && (s[0] == 'E' || !strcmp(s, "OK")), "errno name");
	c = vp_cause_from_errno(err, (__u32)y, (__u32)(y >> 32));
	FZ_CHECK((unsigned int)c < VCPUPERF_CAUSE_MAX, "cause %d", c);
	FZ_CHECK(vp_cause_name(c) && vp_cause_text(c), "cause texts");
	FZ_CHECK(vp_cause_name((enum vcpuperf_cause)(__u32)y) &&
		 vp_cause_text((enum vcpuperf_cause)(__u32)y), "cause texts");
	s = vp_rec_name((__u16)y);
	FZ_CHECK(!s || s[0], "record name");
	FZ_CHECK(vp_detach_name((__u32)x) && vp_kind_name((__u32)y),
		 "detach/kind names");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	__u64 w[6];
	size_t i;
	unsigned int sh;

	fuzz_names((const char *)data, size);

	for (i = 0; i < 6; i++)
		w[i] = fz_u64(data, size, 8 * i);
	/* also small operands: shift by amounts taken from the last byte */
	sh = size ? data[size - 1] : 0;
	fuzz_mul_div(w[0], w[1], w[2]);
	fuzz_mul_div(w[0] >> (sh & 63), w[1], w[2] >> ((sh >> 2) & 63));
	fuzz_mul_div(w[3], w[4], w[5]);
	fuzz_mul_div(w[1], w[0], w[2] | 1);
	fuzz_scale(w[0], w[1], w[2]);
	fuzz_scale(w[3], w[4], w[5] >> (sh & 63));
	fuzz_scale(w[0] >> (sh & 63), w[4], w[5]);
	fuzz_delta(w);
	fuzz_names_tables(w[0], w[1]);
	fuzz_names_tables(w[2], w[3]);
	return 0;
}
