import Foundation
import MeasurementEvents
import MeasurementEventsAggregator
import MeasurementEventsJSON

/// Reads one catalog file into a ``Catalog``, collecting every problem it finds rather than
/// stopping at the first.
///
/// ```swift
/// let result = CatalogReader.read(path: "Events/DemoFeed.json", bytes: Array(data))
/// result.diagnostics   // empty when the file is valid
/// result.catalog       // the events read, even when some were invalid (for cross-file checks)
/// ```
///
/// The rules that need other files or the file system (names unique across catalogs, a
/// `Sources/<Module>/` folder) live in ``CatalogSet``.
package struct CatalogReader {
    /// What ``read(path:bytes:)`` found in one file.
    package struct Result: Sendable {
        /// `nil` when the file is not JSON or has no usable `module` and `events`.
        package var catalog: Catalog?
        /// Every problem of the file, in file order; empty when it is valid.
        package var diagnostics: [CatalogDiagnostic]
    }

    /// An event name: two or more lowercase parts separated by slashes.
    static let eventNamePattern = "^[a-z][a-z0-9_]*(/[a-z][a-z0-9_]*)+$"
    /// An arg name: letters, digits and underscores, starting with a letter.
    static let argNamePattern = "^[A-Za-z][A-Za-z0-9_]*$"
    /// A destination name: a short identifier like `amplitude`, `ga4` or `otlp`.
    static let destinationNamePattern = "^[a-z0-9_-]{1,64}$"

    static let catalogKeys = ["module", "description", "events"]
    static let eventKeys = [
        "name", "description", "type", "category", "args", "deprecated", "owner", "since", "destinations",
    ]
    static let argKeys = [
        "type", "description", "optional", "pii", "values", "minimum", "maximum", "pattern", "maxLength",
    ]

    private let file: String
    private var diagnostics: [CatalogDiagnostic] = []

    private init(file: String) {
        self.file = file
    }

    /// Reads the catalog at `path` (relative to the package root) from its bytes.
    ///
    /// - Parameters:
    ///   - path: the file's path relative to the package root, for messages.
    ///   - bytes: the file's contents.
    /// - Returns: the catalog read, and every problem found.
    package static func read(path: String, bytes: [UInt8]) -> Result {
        var reader = CatalogReader(file: path)
        var parser = JSONParser(bytes: bytes)
        let root: JSONNode
        do {
            root = try parser.parse()
        } catch {
            reader.report(at: error.position, "JSON syntax", found: error.found, expected: error.expected)
            return Result(catalog: nil, diagnostics: reader.diagnostics)
        }
        for duplicate in parser.duplicateKeys {
            reader.report(
                at: duplicate.position, duplicate.objectPath + [.key(duplicate.key)],
                found: "a second \(quoted(duplicate.key)) key",
                expected: "each key once (the first is at \(duplicate.firstPosition))")
        }
        let catalog = reader.readCatalog(root)
        return Result(catalog: catalog, diagnostics: reader.diagnostics.sorted())
    }

    // MARK: Catalog, events, args

    private mutating func readCatalog(_ root: JSONNode) -> Catalog? {
        guard
            let members = object(
                root, at: [], expected: "an object with \"module\" and \"events\"", allowedKeys: Self.catalogKeys)
        else { return nil }
        let expectedModule = moduleName(fromPath: file)
        var module: String?
        if let node = required(
            "module", in: members, of: root, at: [],
            expected: "a \"module\" key naming the Swift module (\(quoted(expectedModule)))"),
            let name = string(node, at: [.key("module")], expected: "the Swift module's name")
        {
            if !isSwiftIdentifier(name) {
                report(
                    at: node.position, [.key("module")], found: quoted(name),
                    expected: "a Swift module name (letters, digits and underscores, not starting with a digit)")
            } else if name != expectedModule {
                report(
                    at: node.position, [.key("module")], found: quoted(name),
                    expected: "\(quoted(expectedModule)), the catalog's file name")
            }
            module = name
        }
        let description = members["description"].flatMap {
            nonEmptyString($0.value, at: [.key("description")], expected: "a description of the module")
        }
        var events: [CatalogEvent] = []
        if let node = required(
            "events", in: members, of: root, at: [], expected: "an \"events\" key with an array of events")
        {
            if case .array(let elements) = node.value {
                for (index, element) in elements.enumerated() {
                    if let event = readEvent(element, index: index) { events.append(event) }
                }
            } else {
                report(at: node.position, [.key("events")], found: node.summary, expected: "an array of events")
            }
        }
        guard let module else { return nil }
        let catalog = Catalog(
            path: file, module: module, description: description, events: events,
            modulePosition: members["module"]!.value.position)
        diagnostics += GeneratedNameCheck.diagnostics(for: catalog)
        return catalog
    }

    private mutating func readEvent(_ node: JSONNode, index: Int) -> CatalogEvent? {
        let path: [JSONPathComponent] = [.key("events"), .index(index)]
        guard
            let members = object(node, at: path, expected: "an object describing an event", allowedKeys: Self.eventKeys)
        else {
            return nil
        }
        var name: String?
        if let nameNode = required(
            "name", in: members, of: node, at: path,
            expected: "a \"name\" key with the event's name, like \"feed/item_tapped\""),
            let text = string(
                nameNode, at: path + [.key("name")], expected: "the event's name, like \"feed/item_tapped\"")
        {
            if Self.isEventName(text) {
                name = text
            } else {
                report(
                    at: nameNode.position, path + [.key("name")], found: quoted(text),
                    expected:
                        "a lowercase slash-namespaced name like \"feed/item_tapped\" (\(Self.eventNamePattern), at most \(EventName.maximumLength) bytes)"
                )
            }
        }
        let description = required(
            "description", in: members, of: node, at: path,
            expected: "a \"description\" key saying what the event records"
        )
        .flatMap { nonEmptyString($0, at: path + [.key("description")], expected: "a description of the event") }
        var type = EventType.default
        if let typeNode = members["type"]?.value,
            let text = string(typeNode, at: path + [.key("type")], expected: "the event type")
        {
            if let parsed = EventType.allCases.first(where: { $0.name == text }) {
                type = parsed
            } else {
                report(
                    at: typeNode.position, path + [.key("type")], found: quoted(text),
                    expected: "one of " + EventType.allCases.map { quoted($0.name) }.joined(separator: ", ")
                        + didYouMean(text, EventType.allCases.map(\.name)))
            }
        }
        let category = members["category"].flatMap {
            nonEmptyString($0.value, at: path + [.key("category")], expected: "a category name")
        }
        var args: [CatalogArg] = []
        if let argsNode = members["args"]?.value {
            if let argMembers = orderedObject(
                argsNode, at: path + [.key("args")], expected: "an object mapping arg names to their descriptions")
            {
                for member in argMembers {
                    if let arg = readArg(member, at: path + [.key("args"), .key(member.key)]) { args.append(arg) }
                }
            }
        }
        let deprecation = members["deprecated"].flatMap { readDeprecation($0.value, at: path + [.key("deprecated")]) }
        let owner = members["owner"].flatMap {
            nonEmptyString($0.value, at: path + [.key("owner")], expected: "the name of the team that owns the event")
        }
        let since = members["since"].flatMap {
            nonEmptyString(
                $0.value, at: path + [.key("since")],
                expected: "the app version that introduced the event, like \"4.2\"")
        }
        let destinations = members["destinations"].flatMap {
            readDestinations($0.value, at: path + [.key("destinations")])
        }
        guard let name, let description else { return nil }
        var event = CatalogEvent(
            name: name, description: description, type: type, category: category, args: args,
            namePosition: members["name"]!.value.position, indexInCatalog: index)
        event.deprecation = deprecation
        event.owner = owner
        event.since = since
        event.destinations = destinations
        return event
    }

    private mutating func readArg(_ member: JSONNode.Member, at path: [JSONPathComponent]) -> CatalogArg? {
        var nameIsValid = true
        if !Self.isArgName(member.key) {
            nameIsValid = false
            report(
                at: member.keyPosition, path, found: "the arg name \(quoted(member.key))",
                expected:
                    "letters, digits and underscores starting with a letter (\(Self.argNamePattern)), so that it can become a Swift identifier"
            )
        }
        let node = member.value
        guard
            let members = object(
                node, at: path, expected: "an object with the arg's \"type\" and \"description\"",
                allowedKeys: Self.argKeys)
        else {
            return nil
        }
        var type: CatalogArgType?
        if let typeNode = required(
            "type", in: members, of: node, at: path,
            expected: "a \"type\" key: one of \"string\", \"int\", \"double\", \"bool\""),
            let text = string(typeNode, at: path + [.key("type")], expected: "the arg's type")
        {
            type = CatalogArgType(rawValue: text)
            if type == nil {
                let names = CatalogArgType.allCases.map(\.rawValue)
                report(
                    at: typeNode.position, path + [.key("type")], found: quoted(text),
                    expected: "one of " + names.map(quoted).joined(separator: ", ") + didYouMean(text, names))
            }
        }
        let description = required(
            "description", in: members, of: node, at: path, expected: "a \"description\" key saying what the arg holds"
        )
        .flatMap { nonEmptyString($0, at: path + [.key("description")], expected: "a description of the arg") }
        let isOptional = members["optional"].flatMap { bool($0.value, at: path + [.key("optional")]) } ?? false
        let isPersonalData = members["pii"].flatMap { bool($0.value, at: path + [.key("pii")]) } ?? false
        if isPersonalData, let type, type != .string, let piiNode = members["pii"] {
            report(
                at: piiNode.value.position, path + [.key("pii")],
                found: "\"pii\": true on an arg of type \(quoted(type.rawValue))",
                expected:
                    "\"pii\" on string args only: personal data is sent hashed, as a \"sha256:…\" string; declare the arg \"type\": \"string\" or remove \"pii\""
            )
        }
        let constraints = type.map { readConstraints(members, type: $0, at: path) } ?? CatalogConstraints()
        guard nameIsValid, let type, let description else { return nil }
        var arg = CatalogArg(
            name: member.key, type: type, description: description, isOptional: isOptional,
            isPersonalData: isPersonalData,
            namePosition: member.keyPosition)
        arg.constraints = constraints
        return arg
    }

    // MARK: Constraints, deprecation and destinations

    /// `true`, `false`, or `{"replacement": "<event name>"}`.
    private mutating func readDeprecation(_ node: JSONNode, at path: [JSONPathComponent]) -> CatalogDeprecation? {
        let expected = "true, false, or an object like {\"replacement\": \"feed/item_opened\"}"
        switch node.value {
        case .bool(let flag):
            return flag ? CatalogDeprecation() : nil
        case .object:
            guard let members = object(node, at: path, expected: expected, allowedKeys: ["replacement"]) else {
                return nil
            }
            var deprecation = CatalogDeprecation()
            if let replacement = members["replacement"],
                let text = string(
                    replacement.value, at: path + [.key("replacement")],
                    expected: "the name of the event that replaces it")
            {
                if Self.isEventName(text) {
                    deprecation.replacement = text
                    deprecation.replacementPosition = replacement.value.position
                } else {
                    report(
                        at: replacement.value.position, path + [.key("replacement")], found: quoted(text),
                        expected: "an event name like \"feed/item_opened\" (\(Self.eventNamePattern))")
                }
            }
            return deprecation
        default:
            report(at: node.position, path, found: node.summary, expected: expected)
            return nil
        }
    }

    /// The names of the only destinations the event may be sent to: a non-empty array of
    /// distinct destination names (``destinationNamePattern``). Every bad element is reported;
    /// the valid ones are kept.
    private mutating func readDestinations(_ node: JSONNode, at path: [JSONPathComponent]) -> [String]? {
        let example = "like [\"amplitude\", \"debug\"]"
        guard case .array(let elements) = node.value else {
            report(
                at: node.position, path, found: node.summary,
                expected: "a non-empty array of destination names, \(example)")
            return nil
        }
        guard !elements.isEmpty else {
            report(
                at: node.position, path, found: "an empty array",
                expected:
                    "at least one destination name, \(example) (leave \"destinations\" out to send the event to every destination)"
            )
            return nil
        }
        var names: [String] = []
        var firstPositions: [String: SourcePosition] = [:]
        for (index, element) in elements.enumerated() {
            let elementPath = path + [.index(index)]
            guard let name = string(element, at: elementPath, expected: "a destination name like \"amplitude\"")
            else { continue }
            guard Self.isDestinationName(name) else {
                let lowered = name.lowercased()
                report(
                    at: element.position, elementPath, found: quoted(name),
                    expected:
                        "a destination name: 1 to 64 lowercase letters, digits, \"-\" and \"_\" (\(Self.destinationNamePattern)), like \"amplitude\""
                        + (Self.isDestinationName(lowered) ? " (did you mean \(quoted(lowered))?)" : ""))
                continue
            }
            if let first = firstPositions[name] {
                report(
                    at: element.position, elementPath, found: "\(quoted(name)) again",
                    expected: "each destination once (the first is at \(first))")
                continue
            }
            firstPositions[name] = element.position
            names.append(name)
        }
        return names
    }

    /// `values`, `minimum`, `maximum`, `pattern` and `maxLength`, each checked against the arg's
    /// type and against each other: a rule no value can satisfy is an error.
    private mutating func readConstraints(
        _ members: [String: JSONNode.Member], type: CatalogArgType, at path: [JSONPathComponent]
    ) -> CatalogConstraints {
        var constraints = CatalogConstraints()
        func misplaced(_ key: String, _ node: JSONNode, appliesTo types: String) {
            report(
                at: node.position, path + [.key(key)],
                found: "\(quoted(key)) on \(type == .int ? "an" : "a") \(type.rawValue) arg",
                expected: "\(quoted(key)) only on \(types) args")
        }
        for key in ["minimum", "maximum"] {
            guard let node = members[key]?.value else { continue }
            guard type == .int || type == .double else {
                misplaced(key, node, appliesTo: "int and double")
                continue
            }
            guard let bound = number(node, at: path + [.key(key)], integral: type == .int) else { continue }
            if key == "minimum" { constraints.minimum = bound } else { constraints.maximum = bound }
        }
        if let minimum = constraints.minimum, let maximum = constraints.maximum, minimum > maximum,
            let node = members["maximum"]?.value
        {
            report(
                at: node.position, path + [.key("maximum")], found: "a maximum (\(numberText(node))) below the minimum",
                expected:
                    "a maximum at least the minimum (\(numberText(members["minimum"]!.value))), so that a value can satisfy both"
            )
        }
        if let node = members["pattern"]?.value {
            if type != .string {
                misplaced("pattern", node, appliesTo: "string")
            } else if let text = string(node, at: path + [.key("pattern")], expected: "a regular expression") {
                if RegularExpressionCheck.isValid(text) {
                    constraints.pattern = text
                } else {
                    report(
                        at: node.position, path + [.key("pattern")], found: quoted(text),
                        expected: "a regular expression that NSRegularExpression accepts")
                }
            }
        }
        if let node = members["maxLength"]?.value {
            if type != .string {
                misplaced("maxLength", node, appliesTo: "string")
            } else if let length = number(node, at: path + [.key("maxLength")], integral: true) {
                if length < 0 || length > Double(Int32.max) {
                    report(
                        at: node.position, path + [.key("maxLength")], found: numberText(node),
                        expected: "a length from 0 to \(Int32.max)")
                } else {
                    constraints.maxLength = Int(length)  // fits: from 0 to Int32.max, checked above
                }
            }
        }
        if let node = members["values"]?.value {
            if type != .string && type != .int {
                misplaced("values", node, appliesTo: "string and int")
            } else {
                constraints.allowedValues = readValues(
                    node, type: type, constraints: constraints, at: path + [.key("values")])
            }
        }
        return constraints
    }

    /// The allowed values: a non-empty array of distinct values of the arg's type, each
    /// satisfying the arg's other rules and giving a distinct Swift case name.
    private mutating func readValues(
        _ node: JSONNode, type: CatalogArgType, constraints: CatalogConstraints, at path: [JSONPathComponent]
    ) -> [CatalogValue] {
        let kind = type == .string ? "strings" : "whole numbers"
        guard case .array(let elements) = node.value, !elements.isEmpty else {
            report(
                at: node.position, path, found: node.summary, expected: "a non-empty array of allowed values (\(kind))")
            return []
        }
        var values: [CatalogValue] = []
        var firstByCase: [String: String] = [:]
        for (index, element) in elements.enumerated() {
            let elementPath = path + [.index(index)]
            let value: CatalogValue
            switch (type, element.value) {
            case (.string, .string(let text)):
                value = .string(text)
            case (.int, .number(let text)):
                guard let number = Int(text), let narrow = Int32(exactly: number) else {
                    report(
                        at: element.position, elementPath, found: element.summary,
                        expected: "a whole number from \(Int32.min) to \(Int32.max) (Int is 32 bits on Apple Watch)")
                    continue
                }
                value = .int(Int(narrow))  // fits: an Int32
            default:
                report(
                    at: element.position, elementPath, found: element.summary,
                    expected: "\(type == .string ? "a string" : "a whole number"), the arg's type (\(type.rawValue))")
                continue
            }
            if let problem = constraints.violation(by: value) {
                report(
                    at: element.position, elementPath, found: "\(value.json), which \(problem)",
                    expected: "allowed values that satisfy the arg's other rules")
                continue
            }
            let caseName = SwiftNaming.caseName(for: value)
            if caseName == "_" {
                report(
                    at: element.position, elementPath, found: value.json,
                    expected: "a value with a letter or a digit, which names its Swift case")
                continue
            }
            if let first = firstByCase[caseName] {
                let same = first == value.json
                report(
                    at: element.position, elementPath,
                    found: same
                        ? "\(value.json) again" : "\(value.json), whose Swift case \(caseName) is also \(first)'s",
                    expected: same ? "each value once" : "values that give distinct Swift case names")
                continue
            }
            firstByCase[caseName] = value.json
            values.append(value)
        }
        return values
    }

    /// A JSON number, as a `Double`; `integral` rejects fractions and exponents that leave one.
    private mutating func number(_ node: JSONNode, at path: [JSONPathComponent], integral: Bool) -> Double? {
        guard case .number(let text) = node.value, let number = Double(text), number.isFinite else {
            report(at: node.position, path, found: node.summary, expected: integral ? "a whole number" : "a number")
            return nil
        }
        if integral, number.rounded() != number || number.magnitude > 9_007_199_254_740_992 {
            report(
                at: node.position, path, found: node.summary,
                expected: "a whole number (at most 2^53 in magnitude, so that it stays exact)")
            return nil
        }
        return number
    }

    private func numberText(_ node: JSONNode) -> String {
        if case .number(let text) = node.value { return text }
        return node.summary
    }

    // MARK: Reading values

    private mutating func report(
        at position: SourcePosition, _ path: [JSONPathComponent], found: String, expected: String
    ) {
        diagnostics.append(
            CatalogDiagnostic(file: file, position: position, path: path, found: found, expected: expected))
    }

    private mutating func report(at position: SourcePosition, _ path: String, found: String, expected: String) {
        diagnostics.append(
            CatalogDiagnostic(file: file, position: position, path: path, found: found, expected: expected))
    }

    /// The members of an object by key; unknown keys are reported.
    private mutating func object(
        _ node: JSONNode, at path: [JSONPathComponent], expected: String, allowedKeys: [String]
    ) -> [String: JSONNode.Member]? {
        guard let members = orderedObject(node, at: path, expected: expected) else { return nil }
        var byKey: [String: JSONNode.Member] = [:]
        for member in members {
            if allowedKeys.contains(member.key) {
                byKey[member.key] = member
            } else {
                report(
                    at: member.keyPosition, path + [.key(member.key)], found: "an unknown key \(quoted(member.key))",
                    expected: "one of " + allowedKeys.map(quoted).joined(separator: ", ")
                        + didYouMean(member.key, allowedKeys))
            }
        }
        return byKey
    }

    private mutating func orderedObject(_ node: JSONNode, at path: [JSONPathComponent], expected: String) -> [JSONNode
        .Member]?
    {
        guard case .object(let members) = node.value else {
            report(at: node.position, path, found: node.summary, expected: expected)
            return nil
        }
        return members
    }

    private mutating func required(
        _ key: String, in members: [String: JSONNode.Member], of node: JSONNode, at path: [JSONPathComponent],
        expected: String
    ) -> JSONNode? {
        if let member = members[key] { return member.value }
        report(at: node.position, path, found: "no \(quoted(key)) key", expected: expected)
        return nil
    }

    private mutating func string(_ node: JSONNode, at path: [JSONPathComponent], expected: String) -> String? {
        if case .string(let text) = node.value { return text }
        report(at: node.position, path, found: node.summary, expected: "a string: \(expected)")
        return nil
    }

    private mutating func nonEmptyString(_ node: JSONNode, at path: [JSONPathComponent], expected: String) -> String? {
        guard let text = string(node, at: path, expected: expected) else { return nil }
        if text.allSatisfy(\.isWhitespace) {
            report(at: node.position, path, found: quoted(text), expected: expected)
            return nil
        }
        return text
    }

    private mutating func bool(_ node: JSONNode, at path: [JSONPathComponent]) -> Bool? {
        if case .bool(let flag) = node.value { return flag }
        report(at: node.position, path, found: node.summary, expected: "true or false")
        return nil
    }

    // MARK: Name rules

    /// Whether `name` matches ``eventNamePattern`` and fits the bus's length limit.
    ///
    /// - Parameter name: an event name from a catalog.
    /// - Returns: whether a catalog may declare it.
    package static func isEventName(_ name: String) -> Bool {
        guard name.utf8.count <= EventName.maximumLength else { return false }
        let parts = name.split(separator: "/", omittingEmptySubsequences: false)
        return parts.count >= 2
            && parts.allSatisfy { part in
                guard let first = part.unicodeScalars.first, first.isASCIILowercaseLetter else { return false }
                return part.unicodeScalars.allSatisfy { $0.isASCIILowercaseLetter || $0.isASCIIDigit || $0 == "_" }
            }
    }

    /// Whether `name` matches ``destinationNamePattern``.
    ///
    /// - Parameter name: a destination name from a catalog.
    /// - Returns: whether a catalog may name it.
    package static func isDestinationName(_ name: String) -> Bool {
        (1...64).contains(name.utf8.count)
            && name.unicodeScalars.allSatisfy { $0.isASCIILowercaseLetter || $0.isASCIIDigit || $0 == "-" || $0 == "_" }
    }

    /// Whether `name` matches ``argNamePattern``.
    ///
    /// - Parameter name: an arg name from a catalog.
    /// - Returns: whether a catalog may declare it.
    package static func isArgName(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, first.isASCIILetter else { return false }
        return name.unicodeScalars.allSatisfy { $0.isASCIILetter || $0.isASCIIDigit || $0 == "_" }
    }
}

/// `Events/DemoFeed.json` → `DemoFeed`.
func moduleName(fromPath path: String) -> String {
    let fileName = path.split(separator: "/").last.map(String.init) ?? path
    return fileName.hasSuffix(".json") ? String(fileName.dropLast(5)) : fileName
}

func isSwiftIdentifier(_ name: String) -> Bool {
    guard let first = name.unicodeScalars.first, first.isASCIILetter || first == "_" else { return false }
    return name.unicodeScalars.allSatisfy { $0.isASCIILetter || $0.isASCIIDigit || $0 == "_" }
        && !SwiftNaming.keywords.contains(name)
}
