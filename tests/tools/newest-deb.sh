#!/bin/bash
# newest-deb.sh DIR PACKAGE [ARCH...]: the path of PACKAGE's newest .deb in
# DIR, among the given architectures (any when none is given), on standard
# output. The one chooser of "the newest .deb" for the tests, the fixtures
# script and the benches.
#
# Newest in dpkg's version order, as apt chooses: an epoch (written %3a in
# a file name) outranks the rest, and '~' sorts before the end of a
# version, neither of which sort -V knows.
# Exit status 1, printing nothing, when DIR holds no such .deb.
set -euo pipefail
(($# >= 2)) || { echo "usage: newest-deb.sh DIR PACKAGE [ARCH...]" >&2; exit 2; }
dir=$1 pkg=$2
shift 2
best='' best_version=''
for deb in "$dir/${pkg}"_*.deb; do
    [[ -e $deb ]] || continue
    # PACKAGE_VERSION_ARCH.deb: a package name holds no '_', a version none.
    rest=${deb##*/}
    rest=${rest#"${pkg}_"}
    rest=${rest%.deb}
    arch=${rest##*_} version=${rest%_*}
    version=${version//%3a/:}
    if (($#)); then
        wanted=0
        for a; do [[ $arch == "$a" ]] && wanted=1; done
        ((wanted)) || continue
    fi
    if [[ -z $best ]] || dpkg --compare-versions "$version" gt "$best_version"; then
        best=$deb best_version=$version
    fi
done
[[ -n $best ]] || exit 1
printf '%s\n' "$best"
