/* Throwaway note keys shared by the log's fuzz targets and make-seeds.sh
 * (which signs the seeds with them), so the "verified" paths are
 * reachable. Test material only: public by design. */
#ifndef RS_FUZZ_TLOG_KEYS_H
#define RS_FUZZ_TLOG_KEYS_H

#define FUZZ_LOG_SKEY "PRIVATE+KEY+fuzz.example/log+667c5f9c+Aecjl5mIYAby2AA9ORblgJ48lwnXw/NWo12EqOnHPlT/"
#define FUZZ_LOG_VKEY "fuzz.example/log+667c5f9c+ASsDh+398XNgDscRTphdJWij6mz4rnrWsMcZVJGdjR2w"
#define FUZZ_WITNESS_SKEY "PRIVATE+KEY+fuzz.example/witness+533609a4+BAecQ+Dlr4gBaXL65kRAg5nFCREZsKDSSBUbniJ2SAV9"
#define FUZZ_WITNESS_VKEY "fuzz.example/witness+533609a4+BKQX49I+qlT71fsLgBJUumKl+cgSu89+TE19ZwWE8JI8"

#endif
