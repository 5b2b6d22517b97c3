# Shared by the tests of Debian's real signing templates. Source after
# lib.sh, with need_tool dpkg-source, sbverify, python3 and reprepro, and make_key db.
#   template_checks DEBS ARCH TEMPLATE: the template through sign-template,
#     its .dsc unpacked, every signature attached to its unsigned file and
#     verified by sbverify and reprosign verify. Output in $WORK/ARCH-TEMPLATE.
#   release_templates RELEASE LIST: the templates fetch-fixtures.sh listed
#     in $FIXTURES/RELEASE/LIST.list, both ways.
#   test_key_stores: PK and KEK made, and OVMF's and AAVMF's stores with
#     them and db.crt enrolled, as $WORK/vars-x64.fd and $WORK/vars-aa64.fd.
#   template_kernels_boot ARCH EFI-ARCH CONSOLE KERNEL-TEMPLATE IMAGE-GLOB:
#     every image template_checks signed for KERNEL-TEMPLATE started by the
#     release's systemd-boot under Secure Boot, an unsigned one refused.
#   templates_through_service DEBS SUITE LIST: every "ARCH TEMPLATE" line of
#     LIST from one local archive, signed by one service pass and published,
#     each .dsc unpacked, each signed upload accepted by reprepro (needs
#     service_lib.sh sourced).

deb_of() {   # deb_of DEBS PKG ARCH: the newest .deb of PKG for ARCH (or all)
    bash "$TESTS_DIR/tools/newest-deb.sh" "$1" "$2" "$3" all
}
unsigned_of_deb() { bash "$TESTS_DIR/tools/template-packages.sh" "$1"; }

template_checks() {
    local debs=$1 arch=$2 t=$3 w=$WORK/$2-$3 tdeb p n f
    tdeb=$(deb_of "$debs" "$t" "$arch")
    mkdir -p "$w/pkgs"
    for p in $(unsigned_of_deb "$tdeb"); do ln -s "$(deb_of "$debs" "$p" "$arch")" "$w/pkgs/"; done
    check "$arch $t: sign-template" "$REPROSIGN" sign-template --quiet --key "$WORK/db.key" --cert "$WORK/db.crt" \
        "$tdeb" --packages "$w/pkgs" --output "$w/out"
    check "$arch $t: dpkg-source -x unpacks the .dsc" bash -c "cd '$w/out' && dpkg-source -x *.dsc unpacked >/dev/null 2>&1"
    check "$arch $t: the unpacked tree holds every signature" bash -c "
        cd '$w/out' && diff <(cd signatures && find . -name '*.sig' | sort) <(cd unpacked/debian/signatures && find . -name '*.sig' | sort)"
    for p in $(unsigned_of_deb "$tdeb"); do
        n=$(find "$w/out/signatures/$p" -name '*.sig' | wc -l)
        check "$arch $t: $p has its $n signature(s)" test "$n" -ge 1
        dpkg-deb -x "$(deb_of "$debs" "$p" "$arch")" "$w/root-$p"
        check "$arch $t: attach-tree attaches $p's signatures" "$REPROSIGN" attach-tree --quiet \
            --signatures "$w/out/signatures/$p" --root "$w/root-$p" --output "$w/signed-$p" --cert "$WORK/db.crt"
        for f in $(cd "$w/signed-$p" && find . -type f | sort); do
            check "$arch $t: $p/${f#./} verifies (sbverify)" sbverify --cert "$WORK/db.crt" "$w/signed-$p/$f"
            check "$arch $t: $p/${f#./} verifies (reprosign verify)" "$REPROSIGN" verify --cert "$WORK/db.crt" \
                "$w/signed-$p/$f"
        done
    done
}

# upload_archive SUITE ARCH...: a reprepro archive for SUITE whose incoming
# queue takes uploads signed by a key of its own (in $WORK/upload-gnupg),
# and only those; prints the service configuration that uploads there.
upload_archive() {
    local suite=$1 rr=$WORK/$1-reprepro home=$WORK/upload-gnupg fpr
    shift
    mkdir -p "$rr/conf" "$rr/incoming" "$rr/tmp" && mkdir -p -m 700 "$home"
    gpg --homedir "$home" --batch --quiet --passphrase '' --quick-gen-key 'upload test <upload@example.org>' \
        ed25519 sign never 2>/dev/null
    fpr=$(gpg --homedir "$home" --with-colons --list-keys | awk -F: '/^fpr/ { print $10; exit }')
    gpg --homedir "$home" --batch --export "$fpr" | gpg --batch --quiet --import 2>/dev/null
    printf 'Codename: %s\nArchitectures: %s source\nComponents: main\nUploaders: uploaders\n' "$suite" "$*" \
        >"$rr/conf/distributions"
    echo "allow * by key ${fpr: -16}" >"$rr/conf/uploaders"
    # A -signed upload names the distribution of its template's changelog:
    # the suite, its security suite, or unstable for a template uploaded there
    # and migrated unchanged (fwupd's, since 2024). Each lands in the suite.
    printf 'Name: incoming\nIncomingDir: incoming\nTempDir: tmp\nAllow: %s %s-security>%s unstable>%s\n' \
        "$suite" "$suite" "$suite" "$suite" >"$rr/conf/incoming"
    printf ', "upload_key": "%s", "gnupg_home": "%s", "incoming": "%s/incoming"' "$fpr" "$home" "$rr"
}

templates_through_service() {
    local debs=$1 suite=$2 list=$3 repo=$WORK/$2-repo arch t p deb sep='' id source upload dsc
    mkdir -p "$repo/pool/main"
    while read -r arch t; do
        deb=$(deb_of "$debs" "$t" "$arch")
        ln -sf "$deb" "$repo/pool/main/"
        for p in $(unsigned_of_deb "$deb"); do ln -sf "$(deb_of "$debs" "$p" "$arch")" "$repo/pool/main/"; done
    done <<<"$list"
    # shellcheck disable=SC2046
    index_repo "$repo" "$suite" $(cut -d' ' -f1 <<<"$list" | sort -u)
    {
        echo '{"packages": ['
        while read -r arch t; do
            deb=$(deb_of "$debs" "$t" "$arch")
            source=$(dpkg-deb -f "$deb" Source | cut -d' ' -f1)
            printf '%s {"package": "%s", "source": "%s", "suite": "%s", "codename": "%s", "architecture": "%s", "version": "%s"}\n' \
                "$sep" "$t" "${source:-$t}" "$suite" "$suite" "$arch" "$(dpkg-deb -f "$deb" Version)"
            sep=,
        done <<<"$list"
        echo ']}'
    } >"$WORK/$suite-requests.json"
    gpg --batch --quiet --detach-sign -o "$WORK/$suite-requests.json.sig" "$WORK/$suite-requests.json"
    # shellcheck disable=SC2046
    upload=$(upload_archive "$suite" $(cut -d' ' -f1 <<<"$list" | sort -u))
    write_config "$suite" "$repo" "$upload"
    check "$suite: service init" svc init --state "$WORK/$suite-state" --config "$WORK/$suite.json"
    check "$suite: service run --once signs all $(wc -l <<<"$list") templates" svc run --state "$WORK/$suite-state" --once
    check "$suite: reprepro processincoming accepts every signed upload" \
        reprepro -b "$WORK/$suite-reprepro" --silent processincoming incoming
    while read -r arch t; do
        deb=$(deb_of "$debs" "$t" "$arch")
        id=${t}_$(dpkg-deb -f "$deb" Version | sed "s/:/%3a/")_$arch
        check "$suite: $arch $t is published" test "$(status_of "$WORK/$suite-state" "$id")" = published
        check "$suite: dpkg-source -x unpacks $arch $t's .dsc" bash -c "
            cd '$WORK/$suite-out/$id' && dpkg-source -x *.dsc '$WORK/$suite-unpacked-$arch-$t' >/dev/null 2>&1"
        dsc=$(ls "$WORK/$suite-out/$id"/*.dsc)
        check "$suite: $arch $t's -signed source is in the archive" bash -c "
            reprepro -b '$WORK/$suite-reprepro' list '$suite' '$(sed -n 's/^Source: //p' "$dsc")' |
                grep -qx '$suite|main|source: $(sed -n 's/^Source: //p' "$dsc") $(sed -n 's/^Version: //p' "$dsc")'"
    done <<<"$list"
    check "$suite: the incoming queue is empty" bash -c "[ -z \"\$(ls -A '$WORK/$suite-reprepro/incoming')\" ]"
}

# release_templates RELEASE LIST: every template of
# $FIXTURES/RELEASE/LIST.list (from tests/fetch-fixtures.sh) through
# template_checks, then through one service pass.
release_templates() {
    local list arch t
    list=$(cat "$FIXTURES/$1/$2.list")
    make_key db
    export SOURCE_DATE_EPOCH=1700000000
    while read -r arch t; do template_checks "$FIXTURES/$1/debs" "$arch" "$t"; done <<<"$list"
    . "$TESTS_DIR/interop/service_lib.sh"
    templates_through_service "$FIXTURES/$1/debs" "$1" "$list"
}

test_key_stores() {
    make_key PK; make_key KEK
    check "efi enroll: OVMF's store with the test keys" "$REPROSIGN" efi enroll --vars /usr/share/OVMF/OVMF_VARS_4M.fd \
        --pk "$WORK/PK.crt" --kek "$WORK/KEK.crt" --db "$WORK/db.crt" --timestamp 1700000000 --output "$WORK/vars-x64.fd"
    check "efi enroll: AAVMF's store with the test keys" "$REPROSIGN" efi enroll --vars /usr/share/AAVMF/AAVMF_VARS.ms.fd \
        --pk "$WORK/PK.crt" --kek "$WORK/KEK.crt" --db "$WORK/db.crt" --timestamp 1700000000 --output "$WORK/vars-aa64.fd"
}

# template_kernels_boot ARCH EFI-ARCH CONSOLE KERNEL-TEMPLATE IMAGE-GLOB,
# after release_templates: the release's systemd-boot, signed through its
# template, starts each kernel signed through KERNEL-TEMPLATE (IMAGE-GLOB
# its place in the unsigned package's root, as boot/vmlinuz-*), two boots
# at a time, to MARKER; an unsigned one is refused. RELEASE names the
# release (its fixtures' directory). Needs $WORK/vars-EFI-ARCH.fd
# (a store of test keys with db.crt in db), qemu, mkfs.vfat and mcopy.
template_kernels_boot() {
    local arch=$1 k=$WORK/$1-$4 sd entry=$WORK/$1.conf kernels=() i n
    [ -d "$WORK/$arch-systemd-boot-efi-$arch-signed-template" ] ||
        template_checks "$FIXTURES/$RELEASE/debs" "$arch" "systemd-boot-efi-$arch-signed-template"
    sd=$(ls "$WORK/$arch-systemd-boot-efi-$arch-signed-template/signed-systemd-boot-efi/usr/lib/systemd/boot/efi/"*.efi)
    UEFI_ARCH=$2
    . "$TESTS_DIR/tools/uefi-boot.sh"
    printf 'timeout 0\ndefault k.conf\n' >"$WORK/loader.conf"
    printf 'title %s\nlinux /vmlinuz\noptions console=%s panic=-1\n' "$RELEASE" "$3" >"$entry"
    # shellcheck disable=SC2206
    kernels=($k/signed-*/$5)
    check "$arch: $4 signed ${#kernels[@]} kernel(s) to boot" test -f "${kernels[0]}"
    for ((i = 0; i < ${#kernels[@]}; i += 2)); do
        for n in "${kernels[@]:i:2}"; do
            boot "$(basename "$(dirname "$n")")-$(basename "$n")" "$sd" "$WORK/vars-$2.fd" \
                "/loader/loader.conf=$WORK/loader.conf" "/loader/entries/k.conf=$entry" "/vmlinuz=$n"
        done
        for n in "${kernels[@]:i:2}"; do
            expect "$(basename "$(dirname "$n")")-$(basename "$n")" ran \
                "$arch: systemd-boot starts ${n#"$k"/signed-}, signed through the template"
        done
    done
    # shellcheck disable=SC2206
    kernels=($k/root-*/$5)
    boot "unsigned-$arch" "$sd" "$WORK/vars-$2.fd" "/loader/loader.conf=$WORK/loader.conf" \
        "/loader/entries/k.conf=$entry" "/vmlinuz=${kernels[0]}"
    expect "unsigned-$arch" denied "$arch: systemd-boot refuses the unsigned ${kernels[0]#"$k"/root-}"
}
