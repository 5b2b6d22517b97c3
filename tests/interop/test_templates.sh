#!/bin/bash
# Every bookworm signing template at its real size, with its real unsigned
# packages read as .debs: through sign-template and through the service,
# each giving a .dsc that dpkg-source -x unpacks. The kernel templates'
# images are attached with attach-tree and verified; linux-image-6.12's
# relative symlinks in source-template/ reach the source package.
. "$TESTS_DIR/lib.sh"
need_fixtures templates
need_tool dpkg-source; need_tool sbverify; need_tool python3

debs=$FIXTURES/debs
templates="fwupd-amd64-signed-template grub-efi-amd64-signed-template shim-helpers-amd64-signed-template
    linux-image-amd64-signed-template linux-image-6.12-amd64-signed-template"
make_key db
export SOURCE_DATE_EPOCH=1700000000

source_of() { local s; s=$(dpkg-deb -f "$1" Source | cut -d' ' -f1); echo "${s:-$(dpkg-deb -f "$1" Package)}"; }
template_deb() { ls "$debs/${1}"_*.deb | sort -V | tail -n 1; }
unsigned_of() {   # the packages the template's files.json names
    dpkg-deb --fsys-tarfile "$(template_deb "$1")" | tar -xO --wildcards './usr/share/code-signing/*/files.json' |
        python3 -c 'import json,sys; print("\n".join(json.load(sys.stdin)["packages"]))'
}

for t in $templates; do
    mkdir -p "$WORK/pkgs-$t"
    for p in $(unsigned_of "$t"); do ln -s "$(ls "$debs/${p}"_*.deb | sort -V | tail -n 1)" "$WORK/pkgs-$t/"; done
    check "$t: sign-template" "$REPROSIGN" sign-template --quiet --key "$WORK/db.key" --cert "$WORK/db.crt" \
        "$(template_deb "$t")" --packages "$WORK/pkgs-$t" --output "$WORK/out-$t"
    check "$t: dpkg-source -x unpacks the .dsc" bash -c "cd '$WORK/out-$t' && dpkg-source -x *.dsc unpacked >/dev/null 2>&1"
    check "$t: the unpacked tree holds every signature" bash -c "
        cd '$WORK/out-$t' && diff <(cd signatures && find . -name '*.sig' | sort) <(cd unpacked/debian/signatures && find . -name '*.sig' | sort)"
done

k=linux-image-6.12-amd64-signed-template
check "$k: the 8 relative symlinks of debian/installer/modules/ are carried as symlinks" bash -c "
    cd '$WORK/out-$k/unpacked/debian/installer/modules' && [ \$(find . -maxdepth 1 -type l | wc -l) = 8 ] &&
    [ \"\$(readlink mips64)\" = mips ] && [ -d mips64/ ]"

# The kernel images: every signature attaches to its unpacked image and
# verifies with the test certificate.
for k in linux-image-amd64-signed-template linux-image-6.12-amd64-signed-template; do
    for p in $(unsigned_of "$k"); do
        mkdir -p "$WORK/root-$k" && dpkg-deb -x "$(ls "$debs/${p}"_*.deb)" "$WORK/root-$k"
        n=$(find "$WORK/out-$k/signatures/$p" -name '*.sig' | wc -l)
        check "$k: $p has its $n signature(s)" test "$n" -ge 1
        check "$k: attach-tree attaches $p's signatures" "$REPROSIGN" attach-tree --quiet \
            --signatures "$WORK/out-$k/signatures/$p" --root "$WORK/root-$k" --output "$WORK/signed-$k" --cert "$WORK/db.crt"
    done
    for f in $(cd "$WORK/signed-$k" && find . -type f | sort); do
        check "$k: $f verifies (sbverify)" sbverify --cert "$WORK/db.crt" "$WORK/signed-$k/$f"
        check "$k: $f verifies (reprosign verify)" "$REPROSIGN" verify --cert "$WORK/db.crt" "$WORK/signed-$k/$f"
    done
done

# ---- through the service: all five templates from one local archive ----
. "$TESTS_DIR/interop/service_lib.sh"
repo=$WORK/templates-repo
mkdir -p "$repo/pool/main" "$repo/dists/bookworm/main/binary-amd64"
for t in $templates; do
    ln -sf "$(template_deb "$t")" "$repo/pool/main/"
    for p in $(unsigned_of "$t"); do ln -sf "$(ls "$debs/${p}"_*.deb | sort -V | tail -n 1)" "$repo/pool/main/"; done
done
index_repo "$repo"
{
    echo '{"packages": ['
    sep=
    for t in $templates; do
        deb=$(template_deb "$t")
        printf '%s {"package": "%s", "source": "%s", "suite": "bookworm", "codename": "bookworm", "architecture": "amd64", "version": "%s"}\n' \
            "$sep" "$t" "$(source_of "$deb")" "$(dpkg-deb -f "$deb" Version)"
        sep=,
    done
    echo ']}'
} >"$WORK/all-requests.json"
gpg --batch --quiet --detach-sign -o "$WORK/all-requests.json.sig" "$WORK/all-requests.json"
write_config all "$repo"
check "service init" svc init --state "$WORK/state" --config "$WORK/all.json"
check "service run --once signs all five templates" svc run --state "$WORK/state" --once
for t in $templates; do
    id=${t}_$(dpkg-deb -f "$(template_deb "$t")" Version | sed "s/:/%3a/")_amd64
    check "service: $t is published" test "$(status_of "$WORK/state" "$id")" = published
    check "service: dpkg-source -x unpacks $t's .dsc" bash -c "
        cd '$WORK/all-out/$id' && dpkg-source -x *.dsc '$WORK/svc-unpacked-$t' >/dev/null 2>&1"
done
finish
