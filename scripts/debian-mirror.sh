#!/bin/sh
# Print the Debian archive URI this machine's own apt sources use for
# Debian 12 (the suite bookworm, component main), e.g. the URI of a local
# mirror or of a caching proxy, without a trailing slash.  Both
# /etc/apt/sources.list(.d) formats count (apt reads them; we ask apt).
# vcpuperf adds suites of the same archive (bookworm-backports, sid for the
# kernel matrix) with this URI and never names a host of its own: lab hosts
# sit behind mirrors and proxies.
#
# Exit status 1, with one line on stderr saying what to add, if no such
# source is configured.
set -eu

uri=$(apt-get indextargets --no-release-info \
	--format '$(REPO_URI) $(RELEASE) $(COMPONENT) $(TARGET_OF)' 2>/dev/null |
	awk '$2 == "bookworm" && $3 == "main" && $4 == "deb" { print $1; exit }')
if [ -z "$uri" ]; then
	echo "no Debian 12 apt source: add a line 'deb <your Debian mirror>/debian bookworm main' to /etc/apt/sources.list (or the deb822 form to /etc/apt/sources.list.d/debian.sources) and run again" >&2
	exit 1
fi
echo "${uri%/}"
