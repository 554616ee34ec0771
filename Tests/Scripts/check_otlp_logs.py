#!/usr/bin/env python3
"""Checks an OTLP/HTTP JSON logs body against the official opentelemetry-proto definitions.

Usage: check_otlp_logs.py BODY.json [EXPECTED_RECORDS] [--protobuf BODY.pb]

Parses the body with google.protobuf.json_format into ExportLogsServiceRequest, with unknown
fields NOT ignored (a misspelt or invented field fails), then checks what the schema cannot
say: every record has an event name and a time, and the record count when one is given.
With --protobuf, also parses BODY.pb (the same events in binary protobuf) and checks that it
holds exactly what the JSON holds: both serialised again, deterministically, are the same
bytes (a field the JSON lacks, a wrong field number or wire type, or an unknown field in the
binary body makes them differ).
Prints one summary line per record on success.

Exit codes: 0 valid, 1 invalid (the reason on stderr), 2 usage, 3 opentelemetry-proto
missing (install it: python3 -m pip install opentelemetry-proto).
"""
import sys

try:
    from google.protobuf import json_format
    from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
except ImportError as error:  # the Swift test turns this into a skip, or a failure under CI
    print(f"opentelemetry-proto is not installed ({error}); "
          "install it with: python3 -m pip install opentelemetry-proto", file=sys.stderr)
    sys.exit(3)


def main(argv):
    protobuf = None
    if "--protobuf" in argv:
        at = argv.index("--protobuf")
        if at + 1 >= len(argv):
            print(__doc__, file=sys.stderr)
            return 2
        protobuf = argv[at + 1]
        argv = argv[:at] + argv[at + 2:]
    if len(argv) not in (2, 3):
        print(__doc__, file=sys.stderr)
        return 2
    with open(argv[1], encoding="utf-8") as file:
        body = file.read()
    request = ExportLogsServiceRequest()
    try:
        json_format.Parse(body, request, ignore_unknown_fields=False)
    except json_format.ParseError as error:
        print(f"not a valid ExportLogsServiceRequest: {error}", file=sys.stderr)
        return 1
    if protobuf is not None:
        binary = ExportLogsServiceRequest()
        with open(protobuf, "rb") as file:
            try:
                binary.ParseFromString(file.read())
            except Exception as error:  # google.protobuf.message.DecodeError, by implementation
                print(f"{protobuf}: not a binary ExportLogsServiceRequest: {error}", file=sys.stderr)
                return 1
        if binary.SerializeToString(deterministic=True) != request.SerializeToString(deterministic=True):
            print(f"{protobuf} differs from {argv[1]}:\nbinary: {binary}\njson: {request}", file=sys.stderr)
            return 1
    records = []
    for resource_logs in request.resource_logs:
        resource = {kv.key for kv in resource_logs.resource.attributes}
        if "service.name" not in resource:
            print("a resource has no service.name attribute", file=sys.stderr)
            return 1
        for scope_logs in resource_logs.scope_logs:
            records.extend(scope_logs.log_records)
    for record in records:
        attributes = {kv.key: kv.value for kv in record.attributes}
        if not record.event_name or attributes.get("event.name").string_value != record.event_name:
            print(f"record without a matching eventName and event.name: {record}", file=sys.stderr)
            return 1
        if record.time_unix_nano == 0 or record.severity_number == 0:
            print(f"record without time or severity: {record}", file=sys.stderr)
            return 1
        print(f"{record.event_name} time={record.time_unix_nano} attributes={sorted(attributes)}")
    if len(argv) == 3 and len(records) != int(argv[2]):
        print(f"{len(records)} log records, expected {argv[2]}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
