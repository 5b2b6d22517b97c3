#!/usr/bin/python3
"""Checks reprosign --json documents against docs/schemas and docs/json.md's
convention; exits 1 naming the first document and member that is wrong.

    json_check.py SCHEMA.json DOC.json...

Each DOC must validate against SCHEMA (JSON Schema draft 2020-12, with
Debian's python3-jsonschema) and, whatever the schema says:
  - hold no null anywhere;
  - write every digest ALG:HEX: a member named as a digest, or any string
    that looks like one (a name, a colon, 32 or more hex digits), matches
    ^sha(256|384|512):[0-9a-f]+$ with as many digits as ALG gives;
  - hold no bare hex string of a digest's length but where a member is hex
    by name (serial, key_id, id, data);
  - write every time ISO 8601 in UTC to the second, a real date: members
    named as times and any string that starts like a date.
"""
import datetime
import json
import re
import sys

from jsonschema import Draft202012Validator

DIGEST = re.compile(r'^sha(256|384|512):[0-9a-f]+$')
DIGEST_HEX_LEN = {'256': 64, '384': 96, '512': 128}
LOOKS_LIKE_DIGEST = re.compile(r'^[A-Za-z0-9_-]+:[0-9A-Fa-f]{32,}$')
BARE_HEX = re.compile(r'^[0-9A-Fa-f]{40,}$')
ISO = re.compile(r'^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$')
LOOKS_LIKE_TIME = re.compile(r'^[0-9]{4}-[0-9]{2}-[0-9]{2}')

DIGEST_MEMBERS = {'signed_digest', 'image_digest', 'image_hash', 'digest', 'fingerprint', 'hash', 'root',
                  'leaf_hash', 'proof'}
TIME_MEMBERS = {'signing_time', 'timestamp', 'revoked_at', 'arrived', 'updated', 'retry_at'}
HEX_MEMBERS = {'serial', 'key_id', 'id', 'data'}


def problems(value, where='', member=''):
    """Yields (path, what is wrong) for every convention the value breaks."""
    if value is None:
        yield where, 'null'
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from problems(v, f'{where}.{k}', k)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from problems(v, f'{where}[{i}]', member)
    elif isinstance(value, str):
        yield from string_problems(value, where, member)
    elif member in DIGEST_MEMBERS or member in TIME_MEMBERS:
        yield where, f'{value!r} is not a string'


def string_problems(s, where, member):
    if member in DIGEST_MEMBERS and member != 'proof' or member == 'proof' and where.endswith(']'):
        m = DIGEST.match(s)
        if not m:
            yield where, f'digest {s!r} is not sha256|sha384|sha512:<lowercase hex>'
        elif len(s) - s.index(':') - 1 != DIGEST_HEX_LEN[m.group(1)]:
            yield where, f'digest {s!r} has the wrong length for its algorithm'
    elif LOOKS_LIKE_DIGEST.match(s) and not DIGEST.match(s):
        yield where, f'{s!r} looks like a digest but is not sha256|sha384|sha512:<lowercase hex>'
    elif BARE_HEX.match(s) and member not in HEX_MEMBERS:
        yield where, f'{s!r} looks like a digest without its algorithm'
    if member in TIME_MEMBERS or LOOKS_LIKE_TIME.match(s):
        if not ISO.match(s):
            yield where, f'time {s!r} is not ISO 8601 UTC (2026-12-04T16:27:26Z)'
        else:
            try:
                datetime.datetime.strptime(s, '%Y-%m-%dT%H:%M:%SZ')
            except ValueError:
                yield where, f'time {s!r} is not a real date'


def main(argv):
    if len(argv) < 3:
        sys.exit('usage: json_check.py SCHEMA.json DOC.json...')
    with open(argv[1]) as f:
        schema = json.load(f)
    Draft202012Validator.check_schema(schema)
    validator = Draft202012Validator(schema)
    bad = 0
    for path in argv[2:]:
        with open(path) as f:
            doc = json.load(f)
        for e in sorted(validator.iter_errors(doc), key=lambda e: list(e.absolute_path)):
            where = ''.join(f'[{p}]' if isinstance(p, int) else f'.{p}' for p in e.absolute_path)
            print(f'{path}: {where or "(document)"}: {e.message} (schema {argv[1]})')
            bad += 1
        for where, what in problems(doc):
            print(f'{path}: {where or "(document)"}: {what} (docs/json.md)')
            bad += 1
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
