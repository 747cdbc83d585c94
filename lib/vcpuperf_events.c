// SPDX-License-Identifier: GPL-2.0
/*
 * Event-name resolution and perf_event_attr construction, shared by
 * vcpuperf.ko and vcpuperf-cat.
 *
 * Accepted spellings follow `perf list`: the generic hardware and software
 * event names with their aliases, hardware-cache events built from a cache,
 * an operation and an optional "-misses", raw events "rHEX", an explicit
 * "TYPE:CONFIG" pair and tracepoints "SUBSYS:NAME" (resolved by the module).
 * Each may carry perf's modifier suffix ":MODS" with letters u, k, G, H, D.
 */
#include "vcpuperf_lib.h"

const char *const vp_default_events[VP_NR_DEFAULT_EVENTS] = {
	VP_DEFAULT_EVENT_NAMES(, "")
};

struct vp_named {
	const char *name;
	__u32 type;
	__u64 config;
};

static const struct vp_named vp_symbols[] = {
	{ "cpu-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES },
	{ "cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES },
	{ "instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS },
	{ "cache-references", PERF_TYPE_HARDWARE,
	  PERF_COUNT_HW_CACHE_REFERENCES },
	{ "cache-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES },
	{ "branch-instructions", PERF_TYPE_HARDWARE,
	  PERF_COUNT_HW_BRANCH_INSTRUCTIONS },
	{ "branches", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS },
	{ "branch-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES },
	{ "bus-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BUS_CYCLES },
	{ "stalled-cycles-frontend", PERF_TYPE_HARDWARE,
	  PERF_COUNT_HW_STALLED_CYCLES_FRONTEND },
	{ "idle-cycles-frontend", PERF_TYPE_HARDWARE,
	  PERF_COUNT_HW_STALLED_CYCLES_FRONTEND },
	{ "stalled-cycles-backend", PERF_TYPE_HARDWARE,
	  PERF_COUNT_HW_STALLED_CYCLES_BACKEND },
	{ "idle-cycles-backend", PERF_TYPE_HARDWARE,
	  PERF_COUNT_HW_STALLED_CYCLES_BACKEND },
	{ "ref-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_REF_CPU_CYCLES },
	{ "cpu-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK },
	{ "task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK },
	{ "page-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS },
	{ "faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS },
	{ "context-switches", PERF_TYPE_SOFTWARE,
	  PERF_COUNT_SW_CONTEXT_SWITCHES },
	{ "cs", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES },
	{ "cpu-migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS },
	{ "migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS },
	{ "minor-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MIN },
	{ "major-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MAJ },
	{ "alignment-faults", PERF_TYPE_SOFTWARE,
	  PERF_COUNT_SW_ALIGNMENT_FAULTS },
	{ "emulation-faults", PERF_TYPE_SOFTWARE,
	  PERF_COUNT_SW_EMULATION_FAULTS },
	{ "dummy", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_DUMMY },
};

/*
 * The tracepoint behind kvm-hypercalls: each architecture traces its
 * hypercall exits under its own name; elsewhere there is none (an absent
 * tracepoint: the event counts nothing and says so).
 */
#if defined(__aarch64__)
#define VP_KVM_HYPERCALL_TP	"kvm_hvc_arm64"
#elif defined(__x86_64__) || defined(__i386__)
#define VP_KVM_HYPERCALL_TP	"kvm_hypercall"
#else
#define VP_KVM_HYPERCALL_TP	""
#endif

/* The named KVM events of VP_KVM_EVENTS and their tracepoints (kvm:NAME). */
static const struct {
	const char *name;
	const char *tp;
} vp_kvm_events[] = {
	{ "kvm-exits", "kvm_exit" },
	{ "kvm-userspace-exits", "kvm_userspace_exit" },
	{ "kvm-mmio", "kvm_mmio" },
	{ "kvm-halts", "kvm_vcpu_wakeup" },
	{ "kvm-hypercalls", VP_KVM_HYPERCALL_TP },
};

/* Hardware-cache names: first entry of each row is perf's own spelling. */
#define VP_MAX_ALIASES	5

struct vp_alias_row {
	__u32 id;
	const char *names[VP_MAX_ALIASES];
};

static const struct vp_alias_row vp_caches[] = {
	{ PERF_COUNT_HW_CACHE_L1D, { "L1-dcache", "l1-d", "l1d", "L1-data" } },
	{ PERF_COUNT_HW_CACHE_L1I,
	  { "L1-icache", "l1-i", "l1i", "L1-instruction" } },
	{ PERF_COUNT_HW_CACHE_LL, { "LLC", "L2" } },
	{ PERF_COUNT_HW_CACHE_DTLB, { "dTLB", "d-tlb", "Data-TLB" } },
	{ PERF_COUNT_HW_CACHE_ITLB, { "iTLB", "i-tlb", "Instruction-TLB" } },
	{ PERF_COUNT_HW_CACHE_BPU,
	  { "branch", "branches", "bpu", "btb", "bpc" } },
	{ PERF_COUNT_HW_CACHE_NODE, { "node" } },
};

static const struct vp_alias_row vp_cache_ops[] = {
	{ PERF_COUNT_HW_CACHE_OP_READ, { "load", "loads", "read" } },
	{ PERF_COUNT_HW_CACHE_OP_WRITE, { "store", "stores", "write" } },
	{ PERF_COUNT_HW_CACHE_OP_PREFETCH,
	  { "prefetch", "prefetches", "speculative-read",
	    "speculative-load" } },
};

static const struct vp_alias_row vp_cache_results[] = {
	{ PERF_COUNT_HW_CACHE_RESULT_ACCESS,
	  { "refs", "Reference", "ops", "access" } },
	{ PERF_COUNT_HW_CACHE_RESULT_MISS, { "misses", "miss" } },
};

#define VP_CACHE_OP_SHIFT	8
#define VP_CACHE_RESULT_SHIFT	16

static int vp_tolower(int c)
{
	return (c >= 'A' && c <= 'Z') ? c - 'A' + 'a' : c;
}

/* Case-insensitive: does @s (length @len) start with @prefix? */
static size_t vp_prefix(const char *s, size_t len, const char *prefix)
{
	size_t n = strlen(prefix);
	size_t i;

	if (n > len)
		return 0;
	for (i = 0; i < n; i++)
		if (vp_tolower((unsigned char)s[i]) !=
		    vp_tolower((unsigned char)prefix[i]))
			return 0;
	return n;
}

static bool vp_equal(const char *s, size_t len, const char *name)
{
	return strlen(name) == len && vp_prefix(s, len, name) == len;
}

/* Longest alias of one row in @rows that @s starts with; row in *@id. */
static size_t vp_match_alias(const char *s, size_t len,
			     const struct vp_alias_row *rows, size_t nr_rows,
			     __u32 *id)
{
	size_t best = 0;
	size_t r, a;

	for (r = 0; r < nr_rows; r++) {
		for (a = 0; a < VP_MAX_ALIASES && rows[r].names[a]; a++) {
			size_t n = vp_prefix(s, len, rows[r].names[a]);

			if (n > best) {
				best = n;
				*id = rows[r].id;
			}
		}
	}
	return best;
}

/*
 * CACHE-OP[-RESULT]: an operation without a result counts accesses, as in
 * perf ("L1-dcache-loads", "L1-dcache-load-misses", "LLC-stores").
 */
static bool vp_parse_cache(const char *s, size_t len, __u64 *config)
{
	__u32 cache = 0, op = 0;
	__u32 result = PERF_COUNT_HW_CACHE_RESULT_ACCESS;
	size_t r, a, n;

	for (r = 0; r < ARRAY_SIZE(vp_caches); r++) {
		for (a = 0; a < VP_MAX_ALIASES && vp_caches[r].names[a]; a++) {
			const char *rest;
			size_t left;

			n = vp_prefix(s, len, vp_caches[r].names[a]);
			if (!n || n == len || s[n] != '-')
				continue;
			cache = vp_caches[r].id;
			rest = s + n + 1;
			left = len - n - 1;
			n = vp_match_alias(rest, left, vp_cache_ops,
					   ARRAY_SIZE(vp_cache_ops), &op);
			if (!n)
				continue;
			if (n == left)
				goto found;
			if (rest[n] != '-')
				continue;
			rest += n + 1;
			left -= n + 1;
			n = vp_match_alias(rest, left, vp_cache_results,
					   ARRAY_SIZE(vp_cache_results),
					   &result);
			if (n && n == left)
				goto found;
			result = PERF_COUNT_HW_CACHE_RESULT_ACCESS;
		}
	}
	return false;
found:
	*config = cache | ((__u64)op << VP_CACHE_OP_SHIFT) |
		  ((__u64)result << VP_CACHE_RESULT_SHIFT);
	return true;
}

static int vp_hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = vp_tolower(c);
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* Strict unsigned parse: decimal, or hex with 0x (or always, if @hex). */
static bool vp_parse_u64(const char *s, size_t len, bool hex, __u64 *out)
{
	unsigned int base = 10;
	__u64 v = 0;
	size_t i = 0;

	if (!hex && len > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		hex = true;
		i = 2;
	}
	if (hex)
		base = 16;
	if (i == len)
		return false;
	for (; i < len; i++) {
		int d = hex ? vp_hexval(s[i]) :
			(s[i] >= '0' && s[i] <= '9' ? s[i] - '0' : -1);

		if (d < 0)
			return false;
		if (v > (~0ULL - (__u64)d) / base)
			return false;
		v = v * base + (__u64)d;
	}
	*out = v;
	return true;
}

/* The modifier letters of perf's ":MODS" event suffix. */
static const struct {
	char letter;
	__u32 mod;
} vp_mod_letters[] = {
	{ 'u', VCPUPERF_MOD_USER },
	{ 'k', VCPUPERF_MOD_KERNEL },
	{ 'G', VCPUPERF_MOD_GUEST },
	{ 'H', VCPUPERF_MOD_HOST },
	{ 'D', VCPUPERF_MOD_PINNED },
};

/* Modifier pairs that exclude each other, in the order they are checked. */
static const __u32 vp_exclusive_mods[] = {
	VCPUPERF_MOD_USER | VCPUPERF_MOD_KERNEL,
	VCPUPERF_MOD_GUEST | VCPUPERF_MOD_HOST,
};

/**
 * vp_mods_conflict() - modifiers of a set that exclude each other
 * @mods:	VCPUPERF_MOD_*
 *
 * u and k exclude each other, and so do G and H (checked in that order).
 *
 * Return: the first pair in @mods that excludes each other (two bits;
 * messages name the lower one first), or 0 when @mods is consistent.
 */
__u32 vp_mods_conflict(__u32 mods)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(vp_exclusive_mods); i++)
		if ((mods & vp_exclusive_mods[i]) == vp_exclusive_mods[i])
			return vp_exclusive_mods[i];
	return 0;
}

/**
 * vp_mod_letter() - perf's suffix letter of one modifier
 * @mod:	one VCPUPERF_MOD_* bit
 *
 * Return: 'u', 'k', 'G', 'H', 'D', or '?'.
 */
char vp_mod_letter(__u32 mod)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(vp_mod_letters); i++)
		if (vp_mod_letters[i].mod == mod)
			return vp_mod_letters[i].letter;
	return '?';
}

static int vp_parse_mods(const char *s, size_t len, __u32 *mods)
{
	size_t i, m;

	*mods = 0;
	if (!len)
		return -EINVAL;
	for (i = 0; i < len; i++) {
		for (m = 0; m < ARRAY_SIZE(vp_mod_letters); m++)
			if (vp_mod_letters[m].letter == s[i])
				break;
		if (m == ARRAY_SIZE(vp_mod_letters))
			return -EINVAL;
		*mods |= vp_mod_letters[m].mod;
	}
	return 0;
}

static bool vp_valid_tp_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.';
}

static bool vp_valid_tp_name(const char *s, size_t len)
{
	size_t i;

	if (!len || len >= VP_TP_LEN)
		return false;
	for (i = 0; i < len; i++)
		if (!vp_valid_tp_char(s[i]))
			return false;
	return true;
}

static const char *vp_memrchr(const char *s, size_t len, char c)
{
	while (len--)
		if (s[len] == c)
			return s + len;
	return NULL;
}

static const char *vp_memchr(const char *s, size_t len, char c)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (s[i] == c)
			return s + i;
	return NULL;
}

static bool vp_symbol(const char *s, size_t len, __u32 *type, __u64 *config)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(vp_symbols); i++) {
		if (vp_equal(s, len, vp_symbols[i].name)) {
			*type = vp_symbols[i].type;
			*config = vp_symbols[i].config;
			return true;
		}
	}
	if (vp_parse_cache(s, len, config)) {
		*type = PERF_TYPE_HW_CACHE;
		return true;
	}
	if (len > 1 && s[0] == 'r' && vp_parse_u64(s + 1, len - 1, true,
						   config)) {
		*type = PERF_TYPE_RAW;
		return true;
	}
	return false;
}

/* "TYPE:CONFIG" with a numeric TYPE. */
static bool vp_type_config(const char *s, size_t len, __u32 *type,
			   __u64 *config)
{
	const char *colon = vp_memchr(s, len, ':');
	__u64 t;

	if (!colon || !vp_parse_u64(s, colon - s, false, &t) || t > ~0U)
		return false;
	if (!vp_parse_u64(colon + 1, len - (colon - s) - 1, false, config))
		return false;
	*type = (__u32)t;
	return true;
}

/* The form parsers below return this when the name is not of their form. */
#define VP_OTHER_FORM	1

/*
 * A named KVM event: the tracepoint kvm:NAME it stands for, resolved by
 * the module, optional (a kernel without it counts nothing and says so).
 */
static bool vp_kvm_event(const char *s, size_t len, struct vp_event_spec *ev)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(vp_kvm_events); i++) {
		if (vp_equal(s, len, vp_kvm_events[i].name)) {
			ev->tracepoint = true;
			ev->optional = true;
			ev->desc.type = PERF_TYPE_TRACEPOINT;
			snprintf(ev->tp_system, sizeof(ev->tp_system), "%s",
				 VP_KVM_TRACE_SYSTEM);
			snprintf(ev->tp_event, sizeof(ev->tp_event), "%s",
				 vp_kvm_events[i].tp);
			return true;
		}
	}
	return false;
}

static bool vp_named(const char *s, size_t len, struct vp_event_spec *ev)
{
	return vp_symbol(s, len, &ev->desc.type, &ev->desc.config) ||
	       vp_kvm_event(s, len, ev);
}

/* NAME[:MODS]: a perf event name (symbolic, cache, raw or KVM's). */
static int vp_parse_named(const char *s, size_t len, const char *colon,
			  struct vp_event_spec *ev, __u32 *mods,
			  char *err, size_t errlen)
{
	if (!colon)
		return vp_named(s, len, ev) ? 0 : VP_OTHER_FORM;
	if (!vp_named(s, colon - s, ev))
		return VP_OTHER_FORM;
	if (vp_parse_mods(colon + 1, len - (colon - s) - 1, mods)) {
		snprintf(err, errlen, "bad modifier in event '%s'",
			 ev->desc.name);
		return -EINVAL;
	}
	return 0;
}

/* TYPE:CONFIG[:MODS], both numbers. */
static int vp_parse_numeric(const char *s, size_t len, const char *colon,
			    struct vp_event_spec *ev, __u32 *mods)
{
	const char *last;
	size_t n = len;
	__u32 m = 0;

	if (!colon || s[0] < '0' || s[0] > '9')
		return VP_OTHER_FORM;
	last = vp_memrchr(s, len, ':');
	if (last != colon && !vp_parse_mods(last + 1, len - (last - s) - 1, &m))
		n = last - s;
	/* Not numeric: a tracepoint subsystem may start with a digit. */
	if (!vp_type_config(s, n, &ev->desc.type, &ev->desc.config))
		return VP_OTHER_FORM;
	*mods = m;
	return 0;
}

/* SUBSYS:NAME[:MODS], resolved by the module. */
static int vp_parse_tracepoint(const char *s, size_t len, const char *colon,
			       struct vp_event_spec *ev, __u32 *mods,
			       char *err, size_t errlen)
{
	const char *last;
	size_t sys_len, base = len;

	if (!colon)
		return VP_OTHER_FORM;
	last = vp_memrchr(s, len, ':');
	sys_len = colon - s;
	if (last != colon) {
		base = last - s;
		if (vp_parse_mods(last + 1, len - base - 1, mods)) {
			snprintf(err, errlen, "bad modifier in event '%s'",
				 ev->desc.name);
			return -EINVAL;
		}
	}
	if (!vp_valid_tp_name(s, sys_len) ||
	    !vp_valid_tp_name(colon + 1, base - sys_len - 1)) {
		snprintf(err, errlen, "bad tracepoint name '%s'",
			 ev->desc.name);
		return -EINVAL;
	}
	ev->tracepoint = true;
	ev->desc.type = PERF_TYPE_TRACEPOINT;
	memcpy(ev->tp_system, s, sys_len);
	memcpy(ev->tp_event, colon + 1, base - sys_len - 1);
	return 0;
}

/* Give the event its modifiers, unless two of them exclude each other. */
static int vp_set_event_mods(struct vp_event_spec *ev, __u32 mods,
			     char *err, size_t errlen)
{
	__u32 clash = vp_mods_conflict(mods);

	if (clash) {
		__u32 second = clash & (clash - 1);

		snprintf(err, errlen, "event '%s': %c and %c exclude each other",
			 ev->desc.name, vp_mod_letter(clash ^ second),
			 vp_mod_letter(second));
		return -EINVAL;
	}
	ev->desc.mods = mods;
	return 0;
}

/**
 * vp_parse_event() - resolve one event name
 * @s:		the name, not necessarily NUL terminated
 * @len:	its length
 * @ev:		filled on success
 * @err:	reason on failure
 * @errlen:	size of @err
 *
 * The forms are tried in this order: NAME[:MODS], TYPE:CONFIG[:MODS],
 * SUBSYS:NAME[:MODS].
 *
 * Return: 0; -EINVAL for a malformed name or modifier; -ENOENT for a name
 * that is no perf event (the message names it).
 */
int vp_parse_event(const char *s, size_t len, struct vp_event_spec *ev,
		   char *err, size_t errlen)
{
	const char *colon;
	__u32 mods = 0;
	int ret;

	memset(ev, 0, sizeof(*ev));
	if (!len) {
		snprintf(err, errlen, "empty event name");
		return -EINVAL;
	}
	if (len >= VCPUPERF_NAME_LEN) {
		snprintf(err, errlen, "event name longer than %d bytes",
			 VCPUPERF_NAME_LEN - 1);
		return -EINVAL;
	}
	memcpy(ev->desc.name, s, len);
	ev->desc.name[len] = '\0';

	colon = vp_memchr(s, len, ':');
	ret = vp_parse_named(s, len, colon, ev, &mods, err, errlen);
	if (ret == VP_OTHER_FORM)
		ret = vp_parse_numeric(s, len, colon, ev, &mods);
	if (ret == VP_OTHER_FORM)
		ret = vp_parse_tracepoint(s, len, colon, ev, &mods, err,
					  errlen);
	if (ret == VP_OTHER_FORM) {
		snprintf(err, errlen, "unknown event '%s'", ev->desc.name);
		return -ENOENT;
	}
	if (ret)
		return ret;
	return vp_set_event_mods(ev, mods, err, errlen);
}

/**
 * vp_parse_event_list() - resolve a comma-separated list of events
 * @s:		the list
 * @len:	its length
 * @evs:	array of VCPUPERF_MAX_EVENTS entries
 * @nr:		number of events on success
 * @err:	reason on failure
 * @errlen:	size of @err
 *
 * Return: 0, or the error of vp_parse_event(); -E2BIG past
 * VCPUPERF_MAX_EVENTS; -EINVAL for an event named twice.
 */
int vp_parse_event_list(const char *s, size_t len, struct vp_event_spec *evs,
			__u32 *nr, char *err, size_t errlen)
{
	__u32 n = 0;
	size_t pos = 0;

	for (;;) {
		const char *comma = vp_memchr(s + pos, len - pos, ',');
		size_t item = comma ? (size_t)(comma - s - pos) : len - pos;
		__u32 i;
		int ret;

		if (n == VCPUPERF_MAX_EVENTS) {
			snprintf(err, errlen, "more than %d events",
				 VCPUPERF_MAX_EVENTS);
			return -E2BIG;
		}
		ret = vp_parse_event(s + pos, item, &evs[n], err, errlen);
		if (ret)
			return ret;
		for (i = 0; i < n; i++) {
			if (!strcmp(evs[i].desc.name, evs[n].desc.name)) {
				snprintf(err, errlen, "event '%s' given twice",
					 evs[n].desc.name);
				return -EINVAL;
			}
		}
		n++;
		if (!comma)
			break;
		pos += item + 1;
	}
	*nr = n;
	return 0;
}

/**
 * vp_is_pmu_event() - does this perf type count on a hardware PMU?
 * @type:	perf_event_attr.type
 *
 * Return: true for hardware, hardware-cache, raw and dynamic PMU types;
 * false for software and tracepoint events, which count in the host
 * kernel whatever the guest/host modifiers say.
 */
bool vp_is_pmu_event(__u32 type)
{
	return type == PERF_TYPE_HARDWARE || type == PERF_TYPE_HW_CACHE ||
	       type == PERF_TYPE_RAW || type >= PERF_TYPE_MAX;
}

/**
 * vp_effective_mods() - the modifiers that apply to an event of a type
 * @type:	perf_event_attr.type
 * @mods:	VCPUPERF_MOD_* requested
 *
 * Guest/host exclusion means something only to a hardware PMU; software
 * and tracepoint events count host-side work and keep counting it.
 *
 * Return: @mods without the bits that do not apply to @type.
 */
__u32 vp_effective_mods(__u32 type, __u32 mods)
{
	if (!vp_is_pmu_event(type))
		mods &= ~(VCPUPERF_MOD_GUEST | VCPUPERF_MOD_HOST);
	return mods;
}

/*
 * Modifiers the kernel ignores, by event class, as tests/pmu/modprobe_honour
 * measures them with perf_event_open() on Linux 6.1, 6.12 and 7.2 (table
 * in vcpuperf(4)): the clock events count all of the thread's time
 * whatever exclude_user/exclude_kernel say; tracepoints look at
 * exclude_kernel (against the registers they carry) but not at
 * exclude_user; no software event or tracepoint looks at exclude_host or
 * exclude_guest.  PMU events leave the modifiers to the PMU driver, which
 * honours them or refuses the event (perf core refuses u/k/G/H with
 * -EINVAL for a PMU that declares it cannot exclude).
 */
#define VP_MODS_GUEST_HOST	(VCPUPERF_MOD_GUEST | VCPUPERF_MOD_HOST)

static bool vp_is_clock(__u32 type, __u64 config)
{
	return type == PERF_TYPE_SOFTWARE &&
	       (config == PERF_COUNT_SW_CPU_CLOCK ||
		config == PERF_COUNT_SW_TASK_CLOCK);
}

/**
 * vp_ignored_mods() - the modifiers the kernel would ignore for an event
 * @type:	perf_event_attr.type
 * @config:	perf_event_attr.config
 *
 * Return: VCPUPERF_MOD_* bits that the kernel accepts for this event and
 * then does not act on: counting with them would give the unmodified
 * count under a modified name.
 */
__u32 vp_ignored_mods(__u32 type, __u64 config)
{
	if (vp_is_pmu_event(type))
		return 0;
	if (vp_is_clock(type, config))
		return VCPUPERF_MOD_USER | VCPUPERF_MOD_KERNEL |
		       VP_MODS_GUEST_HOST;
	if (type == PERF_TYPE_TRACEPOINT)
		return VCPUPERF_MOD_KERNEL | VP_MODS_GUEST_HOST;
	return VP_MODS_GUEST_HOST;
}

/**
 * vp_ignored_why() - why the kernel ignores a modifier for an event
 * @type:	perf_event_attr.type
 * @config:	perf_event_attr.config
 * @mod:	one VCPUPERF_MOD_* bit that vp_ignored_mods() returns
 *
 * Return: a phrase for the error message.
 */
const char *vp_ignored_why(__u32 type, __u64 config, __u32 mod)
{
	if (mod & VP_MODS_GUEST_HOST)
		return "software events and tracepoints ignore G and H (PMU events only)";
	if (vp_is_clock(type, config))
		return "clock events count all of the thread's time whatever u and k say";
	return "tracepoints ignore exclude_user (k); u is honoured";
}

/**
 * vp_build_attr() - the perf_event_attr for a counting per-thread event
 * @desc:	resolved event; desc->mods must be the effective modifiers
 * @attr:	filled in
 *
 * The counter counts (no sampling), starts enabled, reads back
 * time_enabled and time_running so that multiplexing can be scaled, and
 * is not inherited (each thread has its own counter).
 */
void vp_build_attr(const struct vcpuperf_event_desc *desc,
		   struct perf_event_attr *attr)
{
	memset(attr, 0, sizeof(*attr));
	attr->size = sizeof(*attr);
	attr->type = desc->type;
	attr->config = desc->config;
	attr->read_format = PERF_FORMAT_TOTAL_TIME_ENABLED |
			    PERF_FORMAT_TOTAL_TIME_RUNNING;
	attr->disabled = 0;
	attr->inherit = 0;
	if (desc->mods & VCPUPERF_MOD_USER) {
		attr->exclude_kernel = 1;
		attr->exclude_hv = 1;
	}
	if (desc->mods & VCPUPERF_MOD_KERNEL) {
		attr->exclude_user = 1;
		attr->exclude_hv = 1;
	}
	if (desc->mods & VCPUPERF_MOD_GUEST)
		attr->exclude_host = 1;
	if (desc->mods & VCPUPERF_MOD_HOST)
		attr->exclude_guest = 1;
	if (desc->mods & VCPUPERF_MOD_PINNED)
		attr->pinned = 1;
}
