# Sourced by the benchmarks that sign one kernel flavour (its vmlinuz and
# every module, with Debian's signatures stripped), the module-heavy
# workload of about 1,100 files.
#   kernel_tree RS FIXTURES WORK
# Sets pkg (the package's name) and writes WORK/pkgs/$pkg (the unsigned
# tree), WORK/files (its signed files, one a line) and WORK/files.json (a
# template signing them: efi for the image, linux-module for the rest).
kernel_tree() {
    local rs=$1 fixtures=$2 work=$3 kroot f
    bash tests/fetch-fixtures.sh "$fixtures" kernel >/dev/null
    kroot=$(readlink -f "$fixtures/kernel")
    pkg=$(basename "$kroot")
    mkdir -p "$work/pkgs/$pkg"
    echo "preparing an unsigned copy of $pkg ..."
    (cd "$kroot" && find boot/vmlinuz-* lib/modules -type f \( -name 'vmlinuz-*' -o -name '*.ko' \) | sort) >"$work/files"
    while read -r f; do
        mkdir -p "$work/pkgs/$pkg/$(dirname "$f")"
        "$rs" strip "$kroot/$f" --output "$work/pkgs/$pkg/$f"
    done <"$work/files"
    python3 - "$work/files" "$pkg" >"$work/files.json" <<'PY'
import json, sys
files = [l.strip() for l in open(sys.argv[1]) if l.strip()]
print(json.dumps({"packages": {sys.argv[2]: {"trusted_certs": [], "files": [
    {"sig_type": "efi" if "vmlinuz" in f else "linux-module", "file": f} for f in files]}}}))
PY
}
