// SPDX-License-Identifier: GPL-2.0
/*
 * One JSONL row per sample record: per-interval deltas of the cumulative
 * counters, scaled for multiplexing, with the null-versus-zero rules of
 * the perf_qemu.py schema.  This is the hot path: no printf.
 */
#include "vcpuperf-cat.h"

static void vc_opt_u64(struct json_writer *w, bool have, __u64 v)
{
	if (have) {
		json_u64(w, v);
	} else {
		json_need(w, 4);
		json_lit(w, "null");
	}
}

static void vc_bool(struct json_writer *w, bool v)
{
	json_need(w, 5);
	if (v)
		json_lit(w, "true");
	else
		json_lit(w, "false");
}

/* A ratio of two event values, null unless both exist and b > 0. */
static void vc_ratio(struct json_writer *w, int ia, int ib,
		     const bool *have, const __u64 *val)
{
	if (ia < 0 || ib < 0 || !have[ia] || !have[ib] || !val[ib]) {
		json_need(w, 4);
		json_lit(w, "null");
		return;
	}
	json_double(w, (double)val[ia] / (double)val[ib]);
}

static void vc_raw(struct json_writer *w, const struct vc_tid *t,
		   const struct vcpuperf_sample *s)
{
	__u32 i;

	json_need(w, 8);
	json_lit(w, ",\"raw\":{");
	for (i = 0; i < s->nr_events; i++) {
		const struct vcpuperf_count *c = &s->counts[i];

		if (i) {
			json_need(w, 1);
			json_putc(w, ',');
		}
		json_strn(w, t->ev[i].name, VCPUPERF_NAME_LEN);
		json_need(w, 12);
		json_putc(w, ':');
		if (!(s->counting_mask & (1U << i))) {
			json_lit(w, "null");
			continue;
		}
		json_lit(w, "{\"value\":");
		json_u64(w, c->value);
		json_need(w, 12);
		json_lit(w, ",\"enabled\":");
		json_u64(w, c->enabled);
		json_need(w, 12);
		json_lit(w, ",\"running\":");
		json_u64(w, c->running);
		json_need(w, 1);
		json_putc(w, '}');
	}
	json_need(w, 1);
	json_putc(w, '}');
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
	struct json_writer *w = d->rows;
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

	json_need(w, 16);
	json_lit(w, "{\"t_mono_ns\":");
	json_s64(w, (long long)(s->rec.t_mono_ns - d->mono_origin));
	json_need(w, 16);
	json_lit(w, ",\"t_wall_ns\":");
	json_u64(w, s->rec.t_wall_ns);
	json_need(w, 80);
	json_lit(w, ",\"source\":\"vcpuperf\",\"available_in_deployment\":false"
		 ",\"interval_s\":");
	json_fixed(w, s->interval_ns, 9);
	json_need(w, 16);
	json_lit(w, ",\"dt_ns\":");
	if (t->have_prev_t) {
		json_s64(w, (long long)(s->rec.t_mono_ns - t->prev_t_mono));
	} else {
		json_need(w, 4);
		json_lit(w, "null");
	}
	json_need(w, 16);
	json_lit(w, ",\"seq\":");
	json_u64(w, s->rec.seq);
	json_need(w, 16);
	json_lit(w, ",\"pid\":");
	json_u64(w, s->id.pid);
	json_need(w, 16);
	json_lit(w, ",\"tid\":");
	json_u64(w, s->rec.tid);
	json_need(w, 16);
	json_lit(w, ",\"vcpu\":");
	if (s->id.vcpu == VCPUPERF_NO_VCPU)
		json_lit(w, "null");
	else
		json_s64(w, s->id.vcpu);
	json_need(w, 16);
	json_lit(w, ",\"ran\":");
	if (exist)
		vc_bool(w, ran);
	else
		json_lit(w, "null");
	for (i = 0; i < s->nr_events; i++) {
		json_need(w, VC_KEY_LEN);
		json_mem(w, t->key[i], t->key_len[i]);
		vc_opt_u64(w, have[i], val[i]);
	}
	json_need(w, 16);
	json_lit(w, ",\"ipc\":");
	vc_ratio(w, t->i_insns, t->i_cycles, have, val);
	json_need(w, 24);
	json_lit(w, ",\"cache_miss_rate\":");
	vc_ratio(w, t->i_misses, t->i_refs, have, val);
	json_need(w, 24);
	json_lit(w, ",\"time_enabled_ns\":");
	vc_opt_u64(w, exist, max_en);
	json_need(w, 24);
	json_lit(w, ",\"time_running_ns\":");
	vc_opt_u64(w, exist, min_run);
	json_need(w, 24);
	json_lit(w, ",\"multiplexed\":");
	vc_bool(w, mux);
	json_need(w, 24);
	json_lit(w, ",\"read_window_ns\":");
	json_u64(w, s->read_window_ns);
	if (d->raw)
		vc_raw(w, t, s);
	json_need(w, 2);
	json_lit(w, "}\n");

	t->have_prev_t = true;
	t->prev_t_mono = s->rec.t_mono_ns;
	t->rows++;
	d->stats.rows++;
}
