/* The rule table of `reprosign chain`, part of its usage text and so of
 * its man page: stage, checks in order, and where the rule lives. */
#ifndef RS_CLI_CHAIN_RULES_H
#define RS_CLI_CHAIN_RULES_H

#define CHAIN_RULE_TABLE                                                                          \
    "Rules, per stage, in the order they are applied:\n\n"                                       \
    "  firmware -> stage 1 (EDK2 DxeImageVerificationLib)\n"                                     \
    "    1. the image hash in dbx refuses\n"                                                     \
    "    2. any signature whose signer or chain is in dbx (X509 or X509_SHA256) refuses\n"      \
    "    3. a signature chaining to db, or the image hash in db, accepts\n"                      \
    "  shim -> the image it loads: GRUB, fb, mm (shim 16.1 verify.c, pe.c, sbat.c)\n"            \
    "    0. MokPolicy REQUIRE_NX: an image without NX_COMPAT refuses (read_header),\n"        \
    "       and so does a W+X section in an image shim loads (handle_image);\n"                \
    "       MokSBState set: nothing else is checked (secure_mode)\n"                           \
    "    1. SHA-256 and SHA-1 Authenticode hashes (generate_hash)\n"                             \
    "    2. hash denylist: vendor_dbx, dbx (SHA-256, SHA-1), MokListX (SHA-256)\n"               \
    "       (check_denylist)\n"                                                                  \
    "    3. hash allowlist, accepts at once: db (SHA-256, SHA-1; not under\n"                    \
    "       MokIgnoreDB), vendor_db, MokListRT (SHA-256) (check_allowlist)\n"                    \
    "    4. no signature refuses\n"                                                              \
    "    5. per signature: in vendor_dbx, dbx or MokListX by certificate, that\n"                \
    "       signature fails; chaining to db, vendor_db, MokListRT or the built-in\n"             \
    "       vendor_cert accepts; one accepted signature is enough\n"                             \
    "       (verify_one_signature). Only the first certificate of each X509 list\n"             \
    "       counts; module-signing-EKU certificates and X509_SHA256 entries are\n"              \
    "       ignored (check_db_cert_in_ram, verify_eku)\n"                                        \
    "    6. SBAT: one .sbat section without relocations; none refuses\n"                         \
    "       (verify_buffer_sbat, verify_sbat_section); rows need 6 non-empty\n"                  \
    "       columns; the first level row naming a component decides; a lower\n"                 \
    "       generation (atoi, 16 bits) is revoked (verify_sbat_helper)\n"                        \
    "  SBAT level: SbatPolicy picks .sbatlevel \"previous\" (default) or \"latest\";\n"          \
    "    a shim without .sbatlevel applies sbat,1,2021030218; an SbatLevel\n"                    \
    "    variable with a greater version or a date not older is kept\n"                          \
    "    (set_sbat_uefi_variable, preserve_sbat_uefi_variable)\n"                                \
    "  GRUB -> kernel, through shim_lock (Debian GRUB 2.06 kern/efi/sb.c,\n"                     \
    "    loader/i386/efi/linux.c; shim shim_verify): shim's steps 1-6, except\n"                 \
    "    that an image without .sbat passes (in_protocol). GRUB started without\n"              \
    "    shim refuses every kernel\n"                                                            \
    "  kernel -> modules, under lockdown (Linux 6.1 kernel/module/signing.c and\n"               \
    "    Debian's patches)\n"                                                                    \
    "    1. unsigned refuses (LOCKDOWN_MODULE_SIGNATURE)\n"                                      \
    "    2. the signer's key in .builtin_trusted_keys (the kernel image's\n"                     \
    "       system_certificate_list, certs/system_certificates.S; or --kernel-keys)\n"        \
    "       or .machine (MokList + shim's vendor certificate), then .platform (db)\n"          \
    "       accepts; the first keyring holding the key its identifier names\n"                \
    "       decides, so a module changed after signing is rejected there\n"                    \
    "       (EKEYREJECTED), never tried against the next\n"                                   \
    "    3. certificates in .machine or .platform whose TBS hash is in dbx are in\n"          \
    "       no keyring; the built-in ones load first, before dbx is read\n"                    \
    "    4. the SHA-256 of the module file, signature included, in dbx or\n"       \
    "       MokListX refuses (checked once the signature verifies)\n"

#endif
