/* Man pages: reprosign(1) and reprosign-COMMAND(1), from the command table. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/doc.h"
#include "cli/doc_roff.h"

/* The usage text: a synopsis paragraph, then the description. */
static const char *usage_body(const rs_command *cmd)
{
    const char *p = cmd->usage + paragraph_len(cmd->usage);

    while (*p == '\n')
        p++;
    return p;
}

/* The usage text's later lines are indented under "usage: "; the page
 * has no "usage: ", so they lose those 7 columns. */
#define USAGE_INDENT 7

static void roff_synopsis(FILE *f, const rs_command *cmd)
{
    const char *s = cmd->usage, *end = s + paragraph_len(s);

    fputs(".nf\n\\fBreprosign\\fR ", f);
    while (s < end) {
        size_t n = strcspn(s, "\n");

        if (n > (size_t)(end - s))
            n = (size_t)(end - s);
        if (s != cmd->usage && strspn(s, " ") >= USAGE_INDENT) {
            s += USAGE_INDENT;
            n -= USAGE_INDENT;
        }
        roff_line(f, s, n);
        s += n + 1;
    }
    fputs(".fi\n", f);
}

/* ---- options ---- */

static void roff_option(FILE *f, const rs_command *cmd, const rs_optdoc *o)
{
    char letter = cli_short_option(cmd, o->name);

    fputs(".TP\n", f);
    if (letter)
        fprintf(f, "\\fB\\-%c\\fR, ", letter);
    fprintf(f, "\\fB\\-\\-%s\\fR", o->name);
    if (o->arg) {
        fputs(doc_arg_optional(cmd, o->name) ? "[=\\fI" : " \\fI", f);
        roff_text(f, o->arg, strlen(o->arg));
        fputs(doc_arg_optional(cmd, o->name) ? "\\fR]" : "\\fR", f);
    }
    fputc('\n', f);
    roff_lines(f, o->text);
    if (o->dflt) {
        fputs("Default: ", f);
        roff_text(f, o->dflt, strlen(o->dflt));
        fputs(".\n", f);
    }
}

static void roff_options(FILE *f, const rs_command *cmd)
{
    for (const rs_optdoc *o = cmd->optdocs; o && o->name; o++)
        roff_option(f, cmd, o);
    fputs(".TP\n\\fB\\-h\\fR, \\fB\\-\\-help\\fR\nPrint the usage text, the options and an example, and exit.\n", f);
}

/* ---- sections ---- */

static void page_name(const rs_command *cmd, char *out, size_t cap)
{
    snprintf(out, cap, "reprosign-%s", cmd->name);
    for (char *p = out; *p; p++)
        if (*p == ' ')
            *p = '-';
}

static void roff_header(FILE *f, const char *name, int section, const char *summary)
{
    char upper[128];
    size_t i;

    for (i = 0; name[i] && i + 1 < sizeof(upper); i++)
        upper[i] = (char)(name[i] >= 'a' && name[i] <= 'z' ? name[i] - 32 : name[i]);
    upper[i] = '\0';
    fprintf(f, ".TH %s %d \"\" \"reprosign %s\" \"reprosign manual\"\n.SH NAME\n", upper, section, RS_VERSION);
    fprintf(f, "%s \\- ", name);
    roff_line(f, summary, strlen(summary));
}

static bool uses_option(const rs_command *cmd, const char *name)
{
    for (const rs_optdoc *o = cmd->optdocs; o && o->name; o++)
        if (!strcmp(o->name, name))
            return true;
    for (const rs_command *const *s = cmd->subcommands; s && *s; s++)
        if (uses_option(*s, name))
            return true;
    return false;
}

static void roff_exit_status(FILE *f, const rs_command *cmd)
{
    fputs(".SH EXIT STATUS\n.TP\n0\nSuccess", f);
    if (!strcmp(cmd->name, "verify") || !strcmp(cmd->name, "chain"))
        fputs(": the file or the whole chain is trusted", f);
    fputs(".\n.TP\n1\nFailure: one line on standard error, \\fBreprosign: FILE: reason\\fR,\n"
          "and no output left behind.\n.TP\n2\nA usage error: a bad option or argument.\n",
          f);
    if (!strcmp(cmd->name, "service"))
        fputs(".PP\n\\fBservice run \\-\\-once\\fR exits 1 when a request failed for now (it is tried\n"
              "again by itself) and 3 when a request was refused (tried again only after\n"
              "\\fBservice retry\\fR).\n",
              f);
}

static void env_item(FILE *f, const char *name, const char *text)
{
    fprintf(f, ".TP\n\\fB%s\\fR\n%s\n", name, text);
}

static void roff_environment(FILE *f, const rs_command *cmd)
{
    bool service = !strcmp(cmd->name, "service"), children = service || !strcmp(cmd->name, "sign-template");
    bool timed = children || !strcmp(cmd->name, "sign") || !strcmp(cmd->name, "efi");
    bool keys = service || uses_option(cmd, "key"), token = keys || !strcmp(cmd->name, "token");
    bool journal = !strcmp(cmd->name, "attach-tree"), store = !strcmp(cmd->name, "sign-template");

    fputs(".SH ENVIRONMENT\n", f);
    if (timed)
        env_item(f, "SOURCE_DATE_EPOCH", "The signing time (and the time of signed variable updates and the mtime\n"
                                         "of generated archives), so equal inputs give equal bytes.");
    if (token)
        env_item(f, "REPROSIGN_PKCS11_PIN", "The PIN of a PKCS#11 token, when the pkcs11: URI has no pin\\-source;\n"
                                            "without either, it is asked for on the terminal.");
    if (uses_option(cmd, "pass"))
        env_item(f, "KBUILD_SIGN_PIN", "The passphrase of an encrypted key file when \\fB\\-\\-pass\\fR is not given\n"
                                       "(as the kernel's sign\\-file reads it).");
    if (children)
        env_item(f, "PATH, TMPDIR", "Passed to dpkg\\-source and gpgv, which get no other variable but LC_ALL=C.UTF\\-8.");
    if (journal)
        env_item(f, "TMPDIR", "Where the journal of the files checked is kept, in two unnamed temporary\n"
                              "files (128 bytes a file and its paths; /tmp when unset).");
    if (store)
        env_item(f, "TMPDIR", "Also where the files listed are kept between the checks and the signing, in\n"
                              "unnamed temporary files (about 150 bytes a file and its path; /tmp when unset).");
    if (service) {
        env_item(f, "NOTIFY_SOCKET", "Set by systemd: readiness, status and watchdog pings are sent there.");
        env_item(f, "WATCHDOG_USEC, WATCHDOG_PID", "Set by systemd: how often to ping the watchdog.");
        env_item(f, "LISTEN_FDS", "Set by systemd socket activation: the signing socket is taken from it.");
        env_item(f, "JOURNAL_STREAM", "Set by systemd: when standard error is the journal, each message is\n"
                                      "sent as a structured journal entry.");
    }
    if (!timed && !token && !journal && !uses_option(cmd, "pass"))
        fputs("No environment variable changes what this command does.\n", f);
}

static void roff_files(FILE *f, const rs_command *cmd)
{
    fputs(".SH FILES\n", f);
    if (!strcmp(cmd->name, "service")) {
        fputs(".TP\n\\fI/etc/reprosign/service.json\\fR\nThe configuration file, see \\fBreprosign\\-service.json\\fR(5).\n"
              ".TP\n\\fI/var/lib/reprosign\\fR\nThe state directory of the packaged service (\\fB\\-\\-state\\fR).\n",
              f);
        return;
    }
    if (!strcmp(cmd->name, "log"))
        fputs(".TP\n\\fILOGDIR\\fR\nThe log: its checkpoint, tiles and entry bundles, see \\fBreprosign\\-log\\fR(5).\n", f);
    if (uses_option(cmd, "key") || !strcmp(cmd->name, "token"))
        fputs(".TP\n\\fI/etc/pkcs11/modules/\\fR\np11\\-kit's module configuration: the PKCS#11 modules a pkcs11: URI\n"
              "without module\\-path is looked up in.\n",
              f);
    if (!strcmp(cmd->name, "efi") || !strcmp(cmd->name, "chain") || !strcmp(cmd->name, "verify"))
        fputs(".TP\n\\fI/usr/share/OVMF/OVMF_VARS_4M.ms.fd\\fR\nDebian's OVMF variable store with Microsoft's keys enrolled.\n",
              f);
    if (!strcmp(cmd->name, "efi") || !strcmp(cmd->name, "chain"))
        fputs(".TP\n\fI/sys/firmware/efi/efivars\fR\nThe running machine's UEFI variables (efivarfs), read when no store\n"
              "is named on a machine booted through UEFI.\n",
              f);
    fputs(".PP\nThe command reads and writes only the files named on its command line", f);
    fputs(!strcmp(cmd->name, "efi") || !strcmp(cmd->name, "chain") ? " (and efivarfs, as above);\n" : ";\n", f);
    fputs("an output appears by one rename, complete, or not at all.\n", f);
}

static void roff_subcommand(FILE *f, const rs_command *sub)
{
    fputs(".SS ", f);
    roff_line(f, sub->name, strlen(sub->name));
    roff_synopsis(f, sub);
    roff_description(f, usage_body(sub));
    if (sub->optdocs) {
        fputs(".PP\nOptions:\n.RS 4\n", f);
        for (const rs_optdoc *o = sub->optdocs; o->name; o++)
            roff_option(f, sub, o);
        fputs(".RE\n", f);
    }
    if (sub->example) {
        fputs(".PP\nExample:\n", f);
        roff_example(f, sub->example);
    }
}

static void write_command_page(FILE *f, const rs_command *cmd)
{
    char name[128];

    page_name(cmd, name, sizeof(name));
    roff_header(f, name, 1, cmd->summary ? cmd->summary : "");
    fputs(".SH SYNOPSIS\n", f);
    roff_synopsis(f, cmd);
    fputs(".SH DESCRIPTION\n", f);
    roff_description(f, usage_body(cmd));
    if (cmd->subcommands) {
        fputs(".SH SUBCOMMANDS\n", f);
        for (const rs_command *const *s = cmd->subcommands; *s; s++)
            roff_subcommand(f, *s);
    }
    fputs(".SH OPTIONS\n", f);
    roff_options(f, cmd);
    roff_exit_status(f, cmd);
    roff_environment(f, cmd);
    roff_files(f, cmd);
    fputs(".SH EXAMPLES\n", f);
    roff_example(f, cmd->example ? cmd->example : "reprosign --help");
    fputs(".SH SEE ALSO\n\\fBreprosign\\fR(1)", f);
    fputs(!strcmp(cmd->name, "service") ? ", \\fBreprosign\\-service.json\\fR(5), \\fBreprosign\\-log\\fR(5)\n"
          : !strcmp(cmd->name, "log")   ? ", \\fBreprosign\\-log\\fR(5)\n" : "\n", f);
}

static void write_main_page(FILE *f, const rs_command *const *commands, size_t n)
{
    roff_header(f, "reprosign", 1, "Secure Boot code signing for Debian: EFI images and kernel modules");
    fputs(".SH SYNOPSIS\n\\fBreprosign\\fR \\fICOMMAND\\fR [\\fIARGS\\fR]\n.br\n"
          "\\fBreprosign help\\fR \\fICOMMAND\\fR\n"
          ".SH DESCRIPTION\nSigns, attaches, detaches, strips, lists and verifies Secure Boot signatures\n"
          "on PE/COFF EFI images and Linux kernel modules, runs Debian's two\\-stage signing\n"
          "flow (signing templates in, detached signatures and the \\-signed source package\n"
          "out), and checks UEFI trust along a boot chain. The format of every input is\n"
          "detected from its bytes. Every \\fB\\-\\-key\\fR and \\fB\\-\\-cert\\fR takes a file (PEM or DER)\n"
          "or a \\fBpkcs11:\\fR URI.\n.SH COMMANDS\n",
          f);
    for (size_t i = 0; i < n; i++) {
        char name[128];

        page_name(commands[i], name, sizeof(name));
        fprintf(f, ".TP\n\\fB%s\\fR\n", commands[i]->name);
        if (commands[i]->summary)
            roff_line(f, commands[i]->summary, strlen(commands[i]->summary));
        fprintf(f, "See \\fB%s\\fR(1).\n", name);
    }
    fputs(".SH OPTIONS\n.TP\n\\fB\\-h\\fR, \\fB\\-\\-help\\fR\nList the commands and exit.\n"
          ".TP\n\\fB\\-\\-version\\fR\nPrint the version and exit.\n"
          ".SH EXIT STATUS\n.TP\n0\nSuccess.\n.TP\n1\nFailure: one line on standard error, \\fBreprosign: FILE: reason\\fR,\n"
          "and no output left behind.\n.TP\n2\nA usage error.\n.TP\n3\n\\fBservice run \\-\\-once\\fR only: a request was refused.\n"
          ".SH ENVIRONMENT\n.TP\n\\fBSOURCE_DATE_EPOCH\\fR\nThe signing time and the mtime of generated archives, so the same inputs\n"
          "give the same bytes.\n.TP\n\\fBREPROSIGN_PKCS11_PIN\\fR\nThe PIN of a PKCS#11 token.\n"
          ".TP\n\\fBKBUILD_SIGN_PIN\\fR\nThe passphrase of an encrypted key file, when \\fB\\-\\-pass\\fR is not given.\n"
          ".PP\nEach command's page lists the variables it reads.\n"
          ".SH FILES\n.TP\n\\fI/etc/reprosign/service.json\\fR\nThe signing service's configuration, see "
          "\\fBreprosign\\-service.json\\fR(5).\n"
          ".SH EXAMPLES\n.PP\n.nf\n.RS 4\nreprosign efi keygen keys\nreprosign sign \\-\\-key keys/db.key \\-\\-cert keys/db.crt grubx64.efi\n"
          "reprosign verify grubx64.efi.signed \\-\\-cert keys/db.crt\n.RE\n.fi\n.SH SEE ALSO\n",
          f);
    for (size_t i = 0; i < n; i++) {
        char name[128];

        page_name(commands[i], name, sizeof(name));
        fprintf(f, "\\fB%s\\fR(1), ", name);
    }
    fputs("\\fBreprosign\\-service.json\\fR(5), \\fBreprosign\\-log\\fR(5)\n", f);
}

static int write_page(const char *dir, const char *name, const rs_command *cmd, const rs_command *const *commands,
                      size_t n)
{
    char path[4096];
    FILE *f;

    snprintf(path, sizeof(path), "%s/%s.1", dir, name);
    f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "reprosign: %s: %s\n", path, strerror(errno));
        return EXIT_FAIL;
    }
    if (cmd)
        write_command_page(f, cmd);
    else
        write_main_page(f, commands, n);
    if (fclose(f) != 0) {
        fprintf(stderr, "reprosign: %s: %s\n", path, strerror(errno));
        return EXIT_FAIL;
    }
    return EXIT_OK;
}

int doc_write_man_pages(const char *dir, const rs_command *const *commands, size_t n)
{
    if (write_page(dir, "reprosign", NULL, commands, n) != EXIT_OK)
        return EXIT_FAIL;
    for (size_t i = 0; i < n; i++) {
        char name[128];

        page_name(commands[i], name, sizeof(name));
        if (write_page(dir, name, commands[i], commands, n) != EXIT_OK)
            return EXIT_FAIL;
    }
    return EXIT_OK;
}
