# Sourced by the token benchmarks: a SoftHSM2 token in WORK/tokens holding
# the RSA-2048 key of WORK/key.pem (certificate WORK/cert.pem), labelled
# "bench" (token and key), PIN 1234 in WORK/pin.
#   softhsm_token WORK
# Exports SOFTHSM2_CONF and sets module and uri (the key's pkcs11: URI).
softhsm_token() {
    local work=$1
    module=/usr/lib/softhsm/libsofthsm2.so
    [ -e "$module" ] || { echo "$0: SoftHSM2 ($module) is not installed" >&2; exit 1; }
    mkdir "$work/tokens"
    printf 'directories.tokendir = %s\nobjectstore.backend = file\nlog.level = ERROR\n' "$work/tokens" \
        >"$work/softhsm2.conf"
    export SOFTHSM2_CONF=$work/softhsm2.conf
    softhsm2-util --init-token --free --label bench --pin 1234 --so-pin 5678 >/dev/null
    openssl req -new -x509 -newkey rsa:2048 -nodes -sha256 -days 30 -subj /CN=bench \
        -keyout "$work/key.pem" -out "$work/cert.pem" 2>/dev/null
    openssl pkey -in "$work/key.pem" -outform DER -out "$work/key.der"
    pkcs11-tool --module "$module" --token-label bench --login --pin 1234 \
        --write-object "$work/key.der" --type privkey --id 01 --label bench >/dev/null 2>&1
    printf '1234\n' >"$work/pin"
    uri="pkcs11:token=bench;object=bench;type=private?module-path=$module&pin-source=file:$work/pin"
}
