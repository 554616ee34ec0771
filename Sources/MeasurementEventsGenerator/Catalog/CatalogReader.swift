import MeasurementEvents
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

    static let catalogKeys = ["module", "description", "events"]
    static let eventKeys = ["name", "description", "type", "category", "args"]
    static let argKeys = ["type", "description", "optional", "pii"]

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
        guard let name, let description else { return nil }
        return CatalogEvent(
            name: name, description: description, type: type, category: category, args: args,
            namePosition: members["name"]!.value.position, indexInCatalog: index)
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
        guard nameIsValid, let type, let description else { return nil }
        return CatalogArg(
            name: member.key, type: type, description: description, isOptional: isOptional,
            isPersonalData: isPersonalData,
            namePosition: member.keyPosition)
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
