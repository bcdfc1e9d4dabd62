# shellcheck shell=bash
# lib/fluss-version.sh: what a Fluss release is called in Java: its Maven group
# and the package prefix of its classes. Releases before 0.8 were published by
# Alibaba as com.alibaba.fluss; from 0.8 on (Apache incubator) both are
# org.apache.fluss. Sourced by scripts/fluss-cluster.sh and scripts/fluss-java.sh.

# The release used when FLUSS_VERSION is unset.
FLUSS_DEFAULT_VERSION="0.9.1-incubating"

# fluss_package VERSION: prints com.alibaba.fluss or org.apache.fluss; fails
# (printing nothing) when VERSION does not start with MAJOR.MINOR.
fluss_package() {
	[[ "$1" =~ ^([0-9]+)\.([0-9]+) ]] || return 1
	if ((BASH_REMATCH[1] == 0 && BASH_REMATCH[2] < 8)); then
		printf 'com.alibaba.fluss'
	else
		printf 'org.apache.fluss'
	fi
}
