// SPDX-License-Identifier: GPL-2.0
/*
 * Fuzz the QEMU command-line reader (lib/vcpuperf_qemu.c) that names the
 * VM of a qemu= target from /proc/PID/cmdline bytes.
 *
 * The input is the command line as the kernel reads it: arguments, each
 * NUL terminated, the last one possibly not.  vp_qemu_identity() runs
 * with the record's buffer sizes and with tiny ones (truncation), and
 * its answer is checked against a reference written here independently:
 * split the input into arguments, take the last -name/--name and
 * -uuid/--uuid that has a value after it, decode the -name value into
 * its comma-separated items (",," is a comma) and pick the guest name.
 */
#include "vcpuperf_lib.h"
#include "fuzz_common.h"

/* Bigger than any input -max_len lets through. */
#define FZ_MAX		8192
#define FZ_MAX_ARGS	(FZ_MAX + 1)

struct fz_arg {
	const char *s;
	size_t len;
};

static struct fz_arg args[FZ_MAX_ARGS];
static char ref_vm[FZ_MAX], ref_uuid[FZ_MAX], item[FZ_MAX];

static int is_opt(const struct fz_arg *a, const char *name)
{
	char one[32], two[32];

	snprintf(one, sizeof(one), "-%s", name);
	snprintf(two, sizeof(two), "--%s", name);
	return (a->len == strlen(one) && !memcmp(a->s, one, a->len)) ||
	       (a->len == strlen(two) && !memcmp(a->s, two, a->len));
}

/* The guest name in a -name value, the way QEMU's option parser reads it. */
static void ref_name(const struct fz_arg *v)
{
	size_t i = 0, n;
	int first = 1, has_eq;

	for (;;) {
		/* One item: ",," is a literal comma, "," ends it. */
		n = 0;
		has_eq = 0;
		while (i < v->len) {
			if (v->s[i] == ',' && i + 1 < v->len &&
			    v->s[i + 1] == ',') {
				item[n++] = ',';
				i += 2;
			} else if (v->s[i] == ',') {
				break;
			} else {
				has_eq |= v->s[i] == '=';
				item[n++] = v->s[i++];
			}
		}
		if (n > 6 && !memcmp(item, "guest=", 6)) {
			memcpy(ref_vm, item + 6, n - 6);
			ref_vm[n - 6] = '\0';
		} else if (first && n && !has_eq) {
			memcpy(ref_vm, item, n);
			ref_vm[n] = '\0';
		}
		first = 0;
		if (i >= v->len)
			break;
		i++;	/* the separating comma */
	}
}

static void reference(const uint8_t *data, size_t size)
{
	size_t nargs = 0, i, start = 0;

	for (i = 0; i <= size; i++) {
		if (i == size && start == size)
			break;	/* no unterminated last argument */
		if (i == size || !data[i]) {
			args[nargs].s = (const char *)data + start;
			args[nargs].len = i - start;
			nargs++;
			start = i + 1;
		}
	}
	ref_vm[0] = '\0';
	ref_uuid[0] = '\0';
	for (i = 0; i + 1 < nargs; i++) {
		if (is_opt(&args[i], "name")) {
			ref_name(&args[i + 1]);
		} else if (is_opt(&args[i], "uuid")) {
			memcpy(ref_uuid, args[i + 1].s, args[i + 1].len);
			ref_uuid[args[i + 1].len] = '\0';
		}
	}
}

/* @got is @want cut to @size - 1 bytes. */
static void check_cut(const char *what, const char *got, size_t size,
		      const char *want)
{
	size_t wl = strlen(want), gl;

	FZ_CHECK(fz_terminated(got, size), "%s unterminated", what);
	gl = strlen(got);
	FZ_CHECK(gl == (wl < size - 1 ? wl : size - 1) &&
		 !memcmp(got, want, gl), "%s \"%s\", reference \"%.*s\"",
		 what, got, (int)(size - 1), want);
}

static void run(const uint8_t *data, size_t size, size_t vmlen,
		size_t uuidlen)
{
	char vm[VCPUPERF_VM_NAME_LEN + 1], uuid[VCPUPERF_UUID_LEN + 1];

	memset(vm, 'x', sizeof(vm));
	memset(uuid, 'x', sizeof(uuid));
	vp_qemu_identity((const char *)data, size, vm, vmlen, uuid, uuidlen);
	check_cut("vm", vm, vmlen, ref_vm);
	check_cut("uuid", uuid, uuidlen, ref_uuid);
	FZ_CHECK(vm[vmlen] == 'x' && uuid[uuidlen] == 'x',
		 "written past the buffer");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size >= FZ_MAX)
		return 0;
	reference(data, size);
	run(data, size, VCPUPERF_VM_NAME_LEN, VCPUPERF_UUID_LEN);
	run(data, size, 1, 1);
	run(data, size, 4, 3);
	return 0;
}
