import MeasurementEvents

/// Where ``OTLPLogsEncoder`` writes a request, in one of the encodings OTLP/HTTP takes
/// (opentelemetry.io/docs/specs/otlp/#otlphttp-request: binary protobuf, or protobuf's JSON
/// mapping): the encoder says what the request holds, in order, and the writer spells it.
/// Both spell opentelemetry-proto's `ExportLogsServiceRequest` (collector/logs/v1/logs_service.proto):
/// `resource_logs` (1) → `ResourceLogs` { `resource` (1) → `Resource` { `attributes` (1) },
/// `scope_logs` (2) → `ScopeLogs` { `scope` (1) → `InstrumentationScope` { `name` (1), `version` (2) },
/// `log_records` (2) → `LogRecord` } } (logs/v1/logs.proto, resource/v1/resource.proto,
/// common/v1/common.proto); a `Tests/Scripts/check_otlp_logs.py` run parses both with those
/// definitions and finds them equal.
protocol OTLPLogsWriter: Sendable {
    /// The request's `Content-Type`.
    static var contentType: String { get }

    /// An empty request.
    init()

    /// A writer of records only: a part of an entry's records, written on another thread and
    /// then added to the request with ``appendRecords(of:)``.
    static func records() -> Self

    /// Adds the records `part` holds (made with ``records()``) to the entry being written,
    /// after those it has.
    mutating func appendRecords(of part: Self)

    /// Starts a `ResourceLogs` entry: its resource's attributes, its one scope, and the start
    /// of its records.
    mutating func beginResourceLogs(resource: [(String, EventValue)], scopeName: String, scopeVersion: String)

    /// Ends the `ResourceLogs` entry begun last.
    mutating func endResourceLogs()

    /// Starts a `LogRecord`: `time_unix_nano` and `observed_time_unix_nano` (both `nanoseconds`),
    /// `severity_number` 9 (`SEVERITY_NUMBER_INFO`), `severity_text` `INFO`, `event_name`;
    /// its attributes follow.
    mutating func beginRecord(nanoseconds: UInt64, name: String)

    /// An attribute of the record begun last: `KeyValue` { `key`, `value` → `AnyValue` }, the
    /// value a string, `int_value`, `double_value` or `bool_value`. A double that is not
    /// finite goes as the string that ``NonFiniteValues`` spells (some receivers refuse
    /// JSON's `NaN`).
    mutating func attribute(_ key: String, _ value: EventValue)

    /// A string attribute of the record begun last, without an ``EventValue`` around it.
    mutating func attribute(_ key: String, string: String)

    /// A string attribute holding the decimal digits of `number` (the session id).
    mutating func attribute(_ key: String, decimal number: Int64)

    /// Ends the record begun last; `recordsLeft` more follow in this entry (room is made for
    /// them at this record's size after the first).
    mutating func endRecord(recordsLeft: Int)

    /// Ends the request and returns its bytes.
    mutating func finish() -> [UInt8]
}
