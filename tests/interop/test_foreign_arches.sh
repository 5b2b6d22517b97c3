#!/bin/bash
# ctest-label: slow
# reprosign where Debian's buildds also build it: on a 32-bit architecture
# (i386) and a big-endian one (s390x). Each is cross-built from a copy of the
# source in a chroot with bookworm's cross compiler and that architecture's
# libraries, warnings as errors as in every build; its unit tests run under
# qemu-user; and what it signs, verifies and judges there is the same, to the
# byte, as what the amd64 build does with the same inputs.
# ctest-label: vm
. "$TESTS_DIR/lib.sh"
[ "$(id -u)" = 0 ] || skip "a chroot needs root"
need_tool git; need_tool jq; need_tool readelf; need_tool python3; need_tool dpkg-architecture; need_tool dpkg-deb
MSVARS=/usr/share/OVMF/OVMF_VARS_4M.ms.fd
[ -r "$MSVARS" ] || skip "ovmf is not installed"
need_fixtures shim
need_fixtures kernel
need_fixtures bootchain
need_fixtures cross-i386
need_fixtures cross-s390x
. "$TESTS_DIR/interop/buildd_lib.sh"

src=$WORK/src
copy_source "$src"
export SOURCE_DATE_EPOCH=1700000000

# The inputs, and what the amd64 build makes of them. The chroots see only
# the work directory, so everything is copied there.
make_key db
in=$WORK/in
mkdir -p "$in/pkgs" "$in/chain"
python3 "$TESTS_DIR/tools/mkpe.py" "$in/a.efi"
module=$(find "$FIXTURES"/kernel/lib/modules/*/kernel -name '*.ko' | sort | head -n 1)
"$REPROSIGN" strip "$module" --output "$in/m.ko"
cp "$FIXTURES"/debs/shim-unsigned_*.deb "$in/pkgs/"
bash "$TESTS_DIR/tools/template-files-json.sh" \
    "$(bash "$TESTS_DIR/tools/newest-deb.sh" "$FIXTURES/debs" shim-helpers-amd64-signed-template)" >"$in/files.json"
cp "$FIXTURES/root/shim-signed/usr/lib/shim/shimx64.efi.signed" \
    "$FIXTURES/root/grub-efi-amd64-signed/usr/lib/grub/x86_64-efi-signed/grubx64.efi.signed" "$MSVARS" "$in/chain/"
cp "$(ls "$FIXTURES"/signed-kernel/boot/vmlinuz-* | head -n 1)" "$in/chain/vmlinuz"

# make_outputs ARCH RS: what every build must do with those inputs, into
# $WORK/ARCH.
make_outputs() {
    local out=$WORK/$1 rs=$2 c=$in/chain
    mkdir -p "$out" &&
        $rs sign --key "$WORK/db.key" --cert "$WORK/db.crt" "$in/a.efi" --output "$out/a.efi" &&
        $rs sign --key "$WORK/db.key" --cert "$WORK/db.crt" "$in/m.ko" --output "$out/m.ko" &&
        $rs sign-template --quiet --key "$WORK/db.key" --cert "$WORK/db.crt" "$in/files.json" \
            --packages "$in/pkgs" --output "$out/template" &&
        $rs chain --json --vars "$c/OVMF_VARS_4M.ms.fd" "$c/shimx64.efi.signed" "$c/grubx64.efi.signed" \
            "$c/vmlinuz" >"$out/chain.json"
}
check "amd64: sign a PE image and a module, sign-template, chain --json" make_outputs amd64 "$REPROSIGN"
check "... the template's signatures, the tarball and the manifest" \
    test -s "$WORK/amd64/template/signatures.tar.gz" -a -s "$WORK/amd64/template/manifest.json"
check "... and chain's verdict: all three stages of Debian's chain valid" \
    jq -e '(.stages | length) == 3 and all(.stages[]; .valid)' "$WORK/amd64/chain.json"

# cross_arch ARCH QEMU ELF-MACHINE ELF-CLASS ELF-DATA
cross_arch() {
    local arch=$1 qemu=/usr/bin/$2-static machine=$3 class=$4 data=$5
    local triplet multiarch cpu b=$WORK/build-$1
    triplet=$(dpkg-architecture -a"$arch" -qDEB_HOST_GNU_TYPE 2>/dev/null)
    multiarch=$(dpkg-architecture -a"$arch" -qDEB_HOST_MULTIARCH 2>/dev/null)
    cpu=$(dpkg-architecture -a"$arch" -qDEB_HOST_GNU_CPU 2>/dev/null)
    buildd_setup "$FIXTURES/cross/$arch.tar" "cross-$arch"
    local chroot_sh=$WORK/in-cross-$arch
    check "$arch: cmake configures a cross build with bookworm's $triplet-gcc" bash -c "
        '$chroot_sh' \"cd '$src' && PKG_CONFIG_LIBDIR=/usr/lib/$multiarch/pkgconfig:/usr/share/pkgconfig \\
            cmake -S . -B '$b' -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_SYSTEM_NAME=Linux \\
            -DCMAKE_SYSTEM_PROCESSOR=$cpu -DCMAKE_C_COMPILER=$triplet-gcc -DCMAKE_LIBRARY_ARCHITECTURE=$multiarch \\
            -DCMAKE_CROSSCOMPILING_EMULATOR=$qemu\" >'$WORK/$arch-cmake.log' 2>&1 ||
        { tail -n 20 '$WORK/$arch-cmake.log'; exit 1; }"
    # The man pages are rendered by the built binary, run through the emulator.
    check "$arch: it builds, warnings as errors: the binary, its man pages and the unit tests" bash -c "
        '$chroot_sh' \"cmake --build '$b' -j$(nproc)\" >'$WORK/$arch-build.log' 2>&1 ||
        { grep -E '(error|warning): ' '$WORK/$arch-build.log' | head -n 20; tail -n 20 '$WORK/$arch-build.log'; exit 1; }"
    check "$arch: ... an $machine ELF, $class, $data" bash -c "readelf -h '$b/reprosign' >'$WORK/$arch-elf' &&
        grep -q 'Machine: *$machine\$' '$WORK/$arch-elf' && grep -q 'Class: *$class\$' '$WORK/$arch-elf' &&
        grep -q 'Data: *.*$data' '$WORK/$arch-elf'"
    check "$arch: ... that runs under qemu-user" bash -c "
        '$chroot_sh' \"$qemu '$b/reprosign' --version\" | grep -qx 'reprosign [0-9.]*'"
    # qemu-user 7.2 runs glibc's posix_spawn child with the parent's file
    # descriptor table: the child's dup2 onto standard error lands in the
    # parent (a 15-line posix_spawn program shows it). test_spawn checks just
    # those descriptors, so it cannot pass under the emulator; the amd64 run
    # has it.
    check "$arch: every unit test passes under qemu-user (but test_spawn: see above)" bash -c "
        '$chroot_sh' \"ctest --test-dir '$b' -L unit -E '^unit[.]test_spawn' -j$(nproc) --output-on-failure\" \
            >'$WORK/$arch-ctest.log' 2>&1 || { tail -n 40 '$WORK/$arch-ctest.log'; exit 1; }"
    check "$arch: sign, sign-template and chain --json give amd64's outputs" \
        "$chroot_sh" "$(declare -f make_outputs); in='$in' WORK='$WORK' SOURCE_DATE_EPOCH=$SOURCE_DATE_EPOCH
            export SOURCE_DATE_EPOCH; make_outputs $arch '$qemu $b/reprosign'"
    check "$arch: ... the signed PE image, byte for byte" same_bytes "$WORK/$arch/a.efi" "$WORK/amd64/a.efi"
    check "$arch: ... the signed module, byte for byte" same_bytes "$WORK/$arch/m.ko" "$WORK/amd64/m.ko"
    check "$arch: ... the template's every signature, tarball and manifest, byte for byte" \
        diff -r "$WORK/$arch/template" "$WORK/amd64/template"
    check "$arch: ... chain's verdict on Debian's signed chain, to the byte" \
        same_bytes "$WORK/$arch/chain.json" "$WORK/amd64/chain.json"
    check "$arch: verify accepts amd64's signatures, and refuses them with another certificate" \
        "$chroot_sh" "set -e; cd '$WORK'
            $qemu '$b/reprosign' verify --cert db.crt amd64/a.efi
            $qemu '$b/reprosign' verify --cert db.crt amd64/m.ko
            ! $qemu '$b/reprosign' verify --cert '$WORK/other.crt' amd64/a.efi"
}
make_key other
cross_arch i386 qemu-i386 'Intel 80386' ELF32 'little endian'
cross_arch s390x qemu-s390x 'IBM S/390' ELF64 'big endian'
finish
