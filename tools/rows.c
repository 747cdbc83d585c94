// SPDX-License-Identifier: GPL-2.0
/*
 * One JSONL row per sample record: per-interval deltas of the cumulative
 * counters, scaled for multiplexing, with the null-versus-zero rules of
 * the perf_qemu.py schema.  This is the hot path: no printf.
 */
#include "vcpuperf-cat.h"

static void vc_opt_u64(struct jw *w, bool have, __u64 v)
{
	if (have) {
		jw_u64(w, v);
	} else {
		jw_need(w, 4);
		jw_lit(w, "null");
	}
}

static void vc_bool(struct jw *w, bool v)
{
	jw_need(w, 5);
	if (v)
		jw_lit(w, "true");
	else
		jw_lit(w, "false");
}

/* A ratio of two event values, null unless both exist and b > 0. */
static void vc_ratio(struct jw *w, int ia, int ib, const bool *have,
		     const __u64 *val)
{
	if (ia < 0 || ib < 0 || !have[ia] || !have[ib] || !val[ib]) {
		jw_need(w, 4);
		jw_lit(w, "null");
		return;
	}
	jw_double(w, (double)val[ia] / (double)val[ib]);
}

/*
 * "modifiers_not_applied":{"key":"G",...}: command keyword modifiers the
 * kernel would ignore for these events, left out (rare: not a hot path).
 */
static void vc_not_applied(struct jw *w, const struct vc_tid *t)
{
	char letters[8];
	bool first = true;
	__u32 i;

	jw_need(w, 32);
	jw_lit(w, ",\"modifiers_not_applied\":{");
	for (i = 0; i < t->nr_events; i++) {
		if (!(t->not_applied & (1U << i)))
			continue;
		jw_need(w, VC_KEY_LEN);
		if (first)
			jw_mem(w, t->key[i] + 1, t->key_len[i] - 1U);
		else
			jw_mem(w, t->key[i], t->key_len[i]);
		first = false;
		vc_mod_letters(letters, sizeof(letters),
			       t->ev[i].mods >> VCPUPERF_MOD_NOT_APPLIED_SHIFT);
		jw_str(w, letters);
	}
	jw_need(w, 1);
	jw_putc(w, '}');
}

static void vc_raw(struct jw *w, const struct vc_tid *t,
		   const struct vcpuperf_sample *s)
{
	__u32 i;

	jw_need(w, 8);
	jw_lit(w, ",\"raw\":{");
	for (i = 0; i < s->nr_events; i++) {
		const struct vcpuperf_count *c = &s->counts[i];

		if (i) {
			jw_need(w, 1);
			jw_putc(w, ',');
		}
		jw_strn(w, t->ev[i].name, VCPUPERF_NAME_LEN);
		jw_need(w, 12);
		jw_putc(w, ':');
		if (!(s->counting_mask & (1U << i))) {
			jw_lit(w, "null");
			continue;
		}
		jw_lit(w, "{\"value\":");
		jw_u64(w, c->value);
		jw_need(w, 12);
		jw_lit(w, ",\"enabled\":");
		jw_u64(w, c->enabled);
		jw_need(w, 12);
		jw_lit(w, ",\"running\":");
		jw_u64(w, c->running);
		jw_need(w, 1);
		jw_putc(w, '}');
	}
	jw_need(w, 1);
	jw_putc(w, '}');
}

/**
 * vc_write_row() - write the JSONL row of one sample
 * @d:		the decoder (its rows writer and options)
 * @t:		the sampled thread, started, with as many events as @s
 * @s:		the validated sample record
 *
 * Per event: null when the counter does not exist; the raw delta (0)
 * when it was not enabled during the interval; null when it was enabled
 * but never ran on the PMU; else the delta scaled by enabled/running.
 */
void vc_write_row(struct vc_decoder *d, struct vc_tid *t,
		  const struct vcpuperf_sample *s)
{
	struct jw *w = d->rows;
	__u64 val[VCPUPERF_MAX_EVENTS];
	bool have[VCPUPERF_MAX_EVENTS];
	__u64 max_en = 0, min_run = ~0ULL;
	bool exist = false, ran = false, mux = false;
	__u32 i;

	for (i = 0; i < s->nr_events; i++) {
		struct vp_delta dl;

		have[i] = false;
		if (!(s->counting_mask & (1U << i)))
			continue;
		exist = true;
		vp_count_delta(&t->prev[i], &s->counts[i], &dl);
		t->prev[i] = s->counts[i];
		if (dl.enabled > max_en)
			max_en = dl.enabled;
		if (dl.running < min_run)
			min_run = dl.running;
		if (dl.enabled)
			ran = true;
		if (dl.running && dl.running < dl.enabled)
			mux = true;
		have[i] = vp_scale(dl.value, dl.enabled, dl.running, &val[i]);
	}
	t->exist_mask = s->counting_mask;

	jw_need(w, 16);
	jw_lit(w, "{\"t_mono_ns\":");
	jw_s64(w, (long long)(s->rec.t_mono_ns - d->mono_origin));
	jw_need(w, 16);
	jw_lit(w, ",\"t_wall_ns\":");
	jw_u64(w, s->rec.t_wall_ns);
	jw_need(w, 80);
	jw_lit(w, ",\"source\":\"vcpuperf\",\"available_in_deployment\":false"
	       ",\"interval_s\":");
	jw_fixed(w, s->interval_ns, 9);
	jw_need(w, 16);
	jw_lit(w, ",\"dt_ns\":");
	if (t->have_prev_t) {
		jw_s64(w, (long long)(s->rec.t_mono_ns - t->prev_t_mono));
	} else {
		jw_need(w, 4);
		jw_lit(w, "null");
	}
	jw_need(w, 16);
	jw_lit(w, ",\"seq\":");
	jw_u64(w, s->rec.seq);
	jw_need(w, 16);
	jw_lit(w, ",\"pid\":");
	jw_u64(w, s->id.pid);
	jw_need(w, 16);
	jw_lit(w, ",\"tid\":");
	jw_u64(w, s->rec.tid);
	jw_need(w, 16);
	jw_lit(w, ",\"vcpu\":");
	if (s->id.vcpu == VCPUPERF_NO_VCPU)
		jw_lit(w, "null");
	else
		jw_s64(w, s->id.vcpu);
	jw_need(w, 16);
	jw_lit(w, ",\"ran\":");
	if (exist)
		vc_bool(w, ran);
	else
		jw_lit(w, "null");
	for (i = 0; i < s->nr_events; i++) {
		jw_need(w, VC_KEY_LEN);
		jw_mem(w, t->key[i], t->key_len[i]);
		vc_opt_u64(w, have[i], val[i]);
	}
	jw_need(w, 16);
	jw_lit(w, ",\"ipc\":");
	vc_ratio(w, t->i_insns, t->i_cycles, have, val);
	jw_need(w, 24);
	jw_lit(w, ",\"cache_miss_rate\":");
	vc_ratio(w, t->i_misses, t->i_refs, have, val);
	jw_need(w, 24);
	jw_lit(w, ",\"time_enabled_ns\":");
	vc_opt_u64(w, exist, max_en);
	jw_need(w, 24);
	jw_lit(w, ",\"time_running_ns\":");
	vc_opt_u64(w, exist, min_run);
	jw_need(w, 24);
	jw_lit(w, ",\"multiplexed\":");
	vc_bool(w, mux);
	jw_need(w, 24);
	jw_lit(w, ",\"read_window_ns\":");
	jw_u64(w, s->read_window_ns);
	if (t->not_applied)
		vc_not_applied(w, t);
	if (d->raw)
		vc_raw(w, t, s);
	jw_need(w, 2);
	jw_lit(w, "}\n");

	t->have_prev_t = true;
	t->prev_t_mono = s->rec.t_mono_ns;
	t->rows++;
	d->stats.rows++;
}
