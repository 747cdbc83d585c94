// SPDX-License-Identifier: GPL-2.0
/*
 * What QEMU says of itself: a VM's identity from its command line (the
 * guest name of -name and the value of -uuid) and the vCPU index of a
 * vCPU thread's name.  Shared by vcpuperf.ko, which reads them when it
 * attaches a qemu= process, and vcpuperf-cat, which finds QEMUs itself
 * (--all-qemu).
 */
#include "vcpuperf_lib.h"

#define VP_VCPU_PREFIX	"CPU "
#define VP_VCPU_MAX	4095	/* larger than any KVM_MAX_VCPUS */

/**
 * vp_parse_vcpu() - vCPU index from a QEMU thread name
 * @comm:	thread name, NUL terminated
 *
 * QEMU started with -name ...,debug-threads=on names its vCPU threads
 * "CPU <n>/KVM" (or "CPU <n>/TCG" under emulation).
 *
 * Return: n, or -1 when @comm is no vCPU thread name.
 */
int vp_parse_vcpu(const char *comm)
{
	size_t plen = strlen(VP_VCPU_PREFIX);
	const char *p;
	int n = 0;

	if (strncmp(comm, VP_VCPU_PREFIX, plen))
		return -1;
	p = comm + plen;
	if (*p < '0' || *p > '9' || (*p == '0' && p[1] >= '0' && p[1] <= '9'))
		return -1;
	while (*p >= '0' && *p <= '9') {
		n = n * 10 + (*p - '0');
		if (n > VP_VCPU_MAX)
			return -1;
		p++;
	}
	if (strcmp(p, "/KVM") && strcmp(p, "/TCG"))
		return -1;
	return n;
}

/* QEMU's -name takes "guest" as its implied first key. */
#define VP_GUEST_KEY	"guest="

/* Does NUL-terminated argument @arg equal -@opt or --@opt? */
static bool vp_is_option(const char *arg, size_t len, const char *opt)
{
	size_t n = strlen(opt);

	if (len > 1 && arg[0] == '-' && arg[1] == '-') {
		arg++;
		len--;
	}
	return len == n + 1 && arg[0] == '-' && !memcmp(arg + 1, opt, n);
}

/*
 * Copy one item of a QEMU option value (@s, @n bytes, ",," meaning a
 * comma) into @out, cut to @outlen - 1 bytes.
 */
static void vp_copy_item(const char *s, size_t n, char *out, size_t outlen)
{
	size_t i, o = 0;

	for (i = 0; i < n && o + 1 < outlen; i++) {
		out[o++] = s[i];
		if (s[i] == ',')
			i++;	/* ",," is one comma */
	}
	out[o] = '\0';
}

/* Copy @n bytes of @s into @out verbatim, cut to @outlen - 1 bytes. */
static void vp_copy_raw(const char *s, size_t n, char *out, size_t outlen)
{
	if (n > outlen - 1)
		n = outlen - 1;
	memcpy(out, s, n);
	out[n] = '\0';
}

/* Length of the item at @s: up to a single comma or the end. */
static size_t vp_item_len(const char *s, size_t n)
{
	size_t i = 0;

	while (i < n) {
		if (s[i] == ',') {
			if (i + 1 < n && s[i + 1] == ',') {
				i += 2;
				continue;
			}
			break;
		}
		i++;
	}
	return i;
}

/*
 * The guest name in the value of -name: "guest=NAME" anywhere, or a
 * first item without "=" (QEMU's implied key): "vm1,debug-threads=on".
 */
static void vp_name_value(const char *v, size_t n, char *vm, size_t vmlen)
{
	size_t klen = strlen(VP_GUEST_KEY), pos = 0, item;
	bool first = true;

	while (pos <= n) {
		item = vp_item_len(v + pos, n - pos);
		if (item > klen && !memcmp(v + pos, VP_GUEST_KEY, klen))
			vp_copy_item(v + pos + klen, item - klen, vm, vmlen);
		else if (first && item && !memchr(v + pos, '=', item))
			vp_copy_item(v + pos, item, vm, vmlen);
		first = false;
		pos += item + 1;
	}
}

/**
 * vp_qemu_identity() - the VM name and UUID of a QEMU command line
 * @args:	the arguments, each NUL terminated, one after the other (as
 *		/proc/PID/cmdline has them)
 * @len:	bytes in @args
 * @vm:		the guest name of -name (guest=NAME or the first item
 *		without '='), "" when there is none; cut to @vmlen - 1
 * @vmlen:	size of @vm, at least 1
 * @uuid:	the value of -uuid as written (it is a plain string, not an
 *		option list), "" when there is none; cut likewise
 * @uuidlen:	size of @uuid, at least 1
 *
 * Both -opt and --opt are QEMU's spelling; the last occurrence wins, as
 * it does for QEMU.
 */
void vp_qemu_identity(const char *args, size_t len, char *vm, size_t vmlen,
		      char *uuid, size_t uuidlen)
{
	const char *arg, *val, *end = args + len;
	size_t alen, vlen;

	vm[0] = '\0';
	uuid[0] = '\0';
	for (arg = args; arg < end; arg += alen + 1) {
		alen = strnlen(arg, end - arg);
		val = arg + alen + 1;
		if (val >= end)
			break;
		vlen = strnlen(val, end - val);
		if (vp_is_option(arg, alen, "name"))
			vp_name_value(val, vlen, vm, vmlen);
		else if (vp_is_option(arg, alen, "uuid"))
			vp_copy_raw(val, vlen, uuid, uuidlen);
	}
}
