import MeasurementEvents
import MeasurementEventsAggregator

/// Writes the Swift source of `Sources/<Module>/events_<Module>.swift` for one catalog.
///
/// The output depends only on the catalog (no dates, no paths outside the package, no
/// dictionary order), so it is byte-for-byte the same on every machine.
///
/// For `feed/item_tapped` with args `item_id: string` and `position: int` it declares, inside
/// `public enum DemoFeedEvents`:
///
/// ```swift
/// public static let feedItemTapped: EventName = "feed/item_tapped"
/// public struct FeedItemTapped: TypedMeasurementEvent, Hashable { … }   // typed form, init?(_ event:)
/// public static func postFeedItemTapped(itemID: String, position: Int, to center: NotificationCenter = .default)
/// ```
package enum EventsFileWriter {
    /// One file the generator writes: its path relative to the package root, and its text.
    package struct GeneratedFile: Hashable, Sendable {
        /// `Sources/Checkout/events_Checkout.swift`, or a part: `Sources/Checkout/events_Checkout+2.swift`.
        package var path: String
        /// The Swift source, the same bytes on every machine.
        package var contents: String
    }

    /// The most events one generated file holds. A larger catalog is written as the main file
    /// (the enum, with `allNames`, `personalDataArgs` and `catalog` gathered part by part) and
    /// parts of this many events each (`events_<Module>+1.swift`, …: each event's name, its rows
    /// of those tables, its spec, typed struct and post helper, in an extension of the module's
    /// enum). The compiler type-checks and lowers each file on
    /// its own, and a debug build gives each of its processes a batch of files, so a process
    /// holds a bounded share of a catalog of any size instead of all of it. Measured with
    /// `Scripts/check-catalog-scale.sh` (debug): one file of 400 events took 537 MB in one
    /// compiler process, 16 files of 25 took 279 MB, and 10,000 events in one file did not
    /// finish in 75 minutes at 15 GB.
    package static let eventsPerFile = 50

    /// Every file of one catalog, the main file first; one file when the catalog has at most
    /// ``eventsPerFile`` events.
    ///
    /// - Parameter catalog: a valid catalog.
    /// - Returns: the files, in the order their paths sort: `events_X.swift`, `events_X+1.swift`, ….
    package static func files(for catalog: Catalog) -> [GeneratedFile] {
        let parts = partition(catalog.events)
        guard parts.count > 1 else {
            return [GeneratedFile(path: catalog.generatedFilePath, contents: source(for: catalog))]
        }
        var files = [GeneratedFile(path: catalog.generatedFilePath, contents: mainSource(for: catalog, parts: parts))]
        for (index, part) in parts.enumerated() {
            files.append(
                GeneratedFile(
                    path: catalog.generatedPartPath(index + 1),
                    contents: partSource(for: catalog, number: index + 1, of: parts.count, events: part)))
        }
        return files
    }

    /// The events in groups of at most ``eventsPerFile``, in catalog order.
    private static func partition(_ events: [CatalogEvent]) -> [ArraySlice<CatalogEvent>] {
        stride(from: 0, to: max(events.count, 1), by: eventsPerFile).map {
            events[$0..<min($0 + eventsPerFile, events.count)]
        }
    }

    /// The generated file's contents when the catalog fits in one file (at most ``eventsPerFile``
    /// events); for a larger catalog, use ``files(for:)``.
    ///
    /// - Parameter catalog: a valid catalog.
    /// - Returns: the Swift source, the same bytes on every machine.
    package static func source(for catalog: Catalog) -> String {
        var out = SourceBuilder()
        writeHeader(catalog, part: nil, to: &out)
        writeEnumDoc(catalog, to: &out)
        out.line("public enum \(catalog.module)Events {")
        out.indented { out in
            writeNames(catalog.events[...], to: &out)
            writeAllNames(catalog, to: &out)
            out.line()
            writePersonalDataArgs(catalog, to: &out)
            out.line()
            writeCatalog(catalog, to: &out)
            for event in catalog.events {
                out.line()
                writeSpec(event, to: &out)
            }
            writeEvents(catalog.events[...], to: &out)
        }
        out.line("}")
        return out.text
    }

    /// The main file of a catalog written in parts: the enum, with `allNames`,
    /// `personalDataArgs` and `catalog` gathered part by part. Nothing here grows with the
    /// events but one line per part, so no compiler process checks a table of every event.
    private static func mainSource(for catalog: Catalog, parts: [ArraySlice<CatalogEvent>]) -> String {
        var out = SourceBuilder()
        writeHeader(catalog, part: nil, to: &out)
        writeEnumDoc(catalog, to: &out)
        out.line("///")
        out.line("/// The events are declared in \(parts.count) parts, `events_\(catalog.module)+1.swift` to")
        out.line("/// `events_\(catalog.module)+\(parts.count).swift`, so that each compiles on its own.")
        out.line("public enum \(catalog.module)Events {")
        out.indented { out in
            let count = catalog.events.count
            out.doc(allNamesDoc(catalog))
            writeGathering(
                "public static let allNames: [EventName]",
                setUp: ["var names: [EventName] = []", "names.reserveCapacity(\(count))"],
                part: { "names += \(PartFunction.names($0))()" }, result: "names", parts: parts.count, to: &out)
            out.line()
            out.doc(personalDataArgsDoc)
            writeGathering(
                "public static let personalDataArgs: [EventName: Set<String>]",
                setUp: ["var args: [EventName: Set<String>] = [:]"],
                part: { "args.merge(\(PartFunction.personalDataArgs($0))()) { first, _ in first }" }, result: "args",
                parts: parts.count, to: &out)
            out.line()
            out.doc(catalogDoc(catalog))
            writeGathering(
                "public static let catalog: EventCatalog",
                setUp: ["var specs: [EventSpec] = []", "specs.reserveCapacity(\(count))"],
                part: { "specs += \(PartFunction.specs($0))()" },
                result: "EventCatalog(module: \(swiftString(catalog.module)), events: specs)", parts: parts.count,
                to: &out)
        }
        out.line("}")
        return out.text
    }

    /// The internal functions of part `n` that list its names, personal-data args and specs.
    private enum PartFunction {
        static func names(_ number: Int) -> String { "namesOfPart\(number)" }
        static func personalDataArgs(_ number: Int) -> String { "personalDataArgsOfPart\(number)" }
        static func specs(_ number: Int) -> String { "specsOfPart\(number)" }
    }

    /// `<declaration> = { <set-up>; <one line per part>; return <result> }()`.
    private static func writeGathering(
        _ declaration: String, setUp: [String], part: (Int) -> String, result: String, parts: Int,
        to out: inout SourceBuilder
    ) {
        out.line("\(declaration) = {")
        out.indented { out in
            for line in setUp { out.line(line) }
            for number in 1...parts { out.line(part(number)) }
            out.line("return \(result)")
        }
        out.line("}()")
    }

    /// One part of a catalog written in parts: an extension of the module's enum with its
    /// events' names, their rows of the module's tables, specs, typed structs and post helpers.
    private static func partSource(
        for catalog: Catalog, number: Int, of count: Int, events: ArraySlice<CatalogEvent>
    ) -> String {
        var out = SourceBuilder()
        writeHeader(catalog, part: (number, count), to: &out)
        out.line("extension \(catalog.module)Events {")
        out.indented { out in
            writeNames(events, to: &out)
            out.doc("The names of this part's events, in catalog order; part of `allNames`.")
            writePartList(PartFunction.names(number), type: "[EventName]", items: events.map(reference), to: &out)
            out.line()
            out.doc("The personal-data args of this part's events; part of `personalDataArgs`.")
            let withPII = events.filter { $0.args.contains(where: \.isPersonalData) }
            if withPII.isEmpty {
                out.line("static func \(PartFunction.personalDataArgs(number))() -> [EventName: Set<String>] { [:] }")
            } else {
                writePartList(
                    PartFunction.personalDataArgs(number), type: "[EventName: Set<String>]",
                    items: withPII.map(personalDataRow), to: &out)
            }
            out.line()
            out.doc("The specs of this part's events, in catalog order; part of `catalog`.")
            writePartList(
                PartFunction.specs(number), type: "[EventSpec]", items: events.map { "\(specFunction($0))()" },
                to: &out)
            for event in events {
                out.line()
                writeSpec(event, to: &out)
            }
            writeEvents(events, to: &out)
        }
        out.line("}")
        return out.text
    }

    /// `static func <name>() -> <type> { [ item, … ] }`, one item per line.
    private static func writePartList(_ name: String, type: String, items: [String], to out: inout SourceBuilder) {
        out.line("static func \(name)() -> \(type) {")
        out.indented { out in
            out.line("[")
            out.indented { out in
                for item in items { out.line("\(item),") }
            }
            out.line("]")
        }
        out.line("}")
    }

    /// How every generated file begins: the generator removes only files that begin so.
    package static let headerPrefix = "// Generated by measurement-events from "

    private static func writeHeader(_ catalog: Catalog, part: (number: Int, count: Int)?, to out: inout SourceBuilder) {
        let which = part.map { " (part \($0.number) of \($0.count))" } ?? ""
        out.line("\(headerPrefix)\(catalog.path)\(which). Do not edit.")
        out.line("// swift-format-ignore-file")
        out.line()
        out.line("import Foundation")
        out.line("import MeasurementEvents")
        out.line()
    }

    private static func writeEnumDoc(_ catalog: Catalog, to out: inout SourceBuilder) {
        out.doc(catalog.description ?? "The measurement events of the \(catalog.module) module, from \(catalog.path).")
    }

    /// Each event's name constant.
    private static func writeNames(_ events: ArraySlice<CatalogEvent>, to out: inout SourceBuilder) {
        for event in events {
            out.doc(event.description)
            writeDeprecation(event, renamed: replacementIdentifier, to: &out)
            out.line("public static let \(identifier(event)): EventName = \(swiftString(event.name))")
            out.line()
        }
    }

    /// Each event's typed struct and post helper.
    private static func writeEvents(_ events: ArraySlice<CatalogEvent>, to out: inout SourceBuilder) {
        for event in events {
            out.line()
            writeStruct(event, to: &out)
            out.line()
            writePostHelper(event, to: &out)
        }
    }

    // MARK: Module-level tables

    private static func allNamesDoc(_ catalog: Catalog) -> String {
        "Every event name of this module, in catalog order; for allow-lists (`allowList + \(catalog.module)Events.allNames.map(EventPattern.init)`)."
    }

    private static let personalDataArgsDoc =
        "The names of the personal-data (PII) args of each event that has any; for redaction."

    private static func catalogDoc(_ catalog: Catalog) -> String {
        "This module's catalog as a value: register it at aggregator setup (`configuration.catalogs = [\(catalog.module)Events.catalog, …]`) so that its personal-data args are hashed before any tracker sees them."
    }

    /// `feedItemTapped: ["email"]`: an event's row of `personalDataArgs`.
    private static func personalDataRow(_ event: CatalogEvent) -> String {
        let names = event.args.filter(\.isPersonalData).map { swiftString($0.name) }
        return "\(reference(event)): [\(names.joined(separator: ", "))]"
    }

    private static func writeAllNames(_ catalog: Catalog, to out: inout SourceBuilder) {
        out.doc(allNamesDoc(catalog))
        if catalog.events.isEmpty {
            out.line("public static let allNames: [EventName] = []")
            return
        }
        out.line("public static let allNames: [EventName] = [")
        out.indented { out in
            for event in catalog.events { out.line("\(reference(event)),") }
        }
        out.line("]")
    }

    private static func writePersonalDataArgs(_ catalog: Catalog, to out: inout SourceBuilder) {
        out.doc(personalDataArgsDoc)
        let withPII = catalog.events.filter { $0.args.contains(where: \.isPersonalData) }
        if withPII.isEmpty {
            out.line("public static let personalDataArgs: [EventName: Set<String>] = [:]")
            return
        }
        out.line("public static let personalDataArgs: [EventName: Set<String>] = [")
        out.indented { out in
            for event in withPII { out.line("\(personalDataRow(event)),") }
        }
        out.line("]")
    }

    /// The catalog, assembled from one small function per event (``writeSpec(_:to:)``) rather
    /// than one literal holding every spec: the type checker solves each function on its own, so
    /// the compile time and memory of the file grow linearly with its events and args (one
    /// literal of every spec took 37 s and 8.7 GB for 300 events, and was killed past 16 GB at
    /// 1,000; see `Scripts/check-catalog-scale.sh`).
    private static func writeCatalog(_ catalog: Catalog, to out: inout SourceBuilder) {
        out.doc(catalogDoc(catalog))
        if catalog.events.isEmpty {
            out.line(
                "public static let catalog: EventCatalog = EventCatalog(module: \(swiftString(catalog.module)), events: [])"
            )
            return
        }
        out.line("public static let catalog: EventCatalog = EventCatalog(")
        out.indented { out in
            out.line("module: \(swiftString(catalog.module)),")
            out.line("events: [")
            out.indented { out in
                for event in catalog.events { out.line("\(specFunction(event))(),") }
            }
            out.line("])")
        }
    }

    /// The function that makes one event's spec, typed explicitly: `spec_feedItemTapped`. Event
    /// identifiers have no underscore, so the name cannot clash with another member.
    private static func specFunction(_ event: CatalogEvent) -> String {
        "spec_" + SwiftNaming.lowerCamelCase(event.name)
    }

    private static func writeSpec(_ event: CatalogEvent, to out: inout SourceBuilder) {
        out.line("private static func \(specFunction(event))() -> EventSpec {")
        out.indented { out in
            if event.args.isEmpty {
                out.line(
                    "EventSpec(name: \(reference(event)), type: .\(caseName(event.type)), args: []\(planFields(event)))"
                )
                return
            }
            out.line("let args: [ArgSpec] = [")
            out.indented { out in
                for arg in event.args {
                    out.line(
                        "ArgSpec(name: \(swiftString(arg.name)), type: .\(arg.type.rawValue), isRequired: \(!arg.isOptional), isPersonalData: \(arg.isPersonalData)\(ruleFields(arg))),"
                    )
                }
            }
            out.line("]")
            out.line(
                "return EventSpec(name: \(reference(event)), type: .\(caseName(event.type)), args: args\(planFields(event)))"
            )
        }
        out.line("}")
    }

    /// The event's plan fields after `args:`, only those the catalog gives.
    private static func planFields(_ event: CatalogEvent) -> String {
        var fields = ""
        if let deprecation = event.deprecation {
            fields += ", isDeprecated: true"
            if let replacement = deprecation.replacement { fields += ", replacement: \(swiftString(replacement))" }
        }
        if let owner = event.owner { fields += ", owner: \(swiftString(owner))" }
        if let since = event.since { fields += ", since: \(swiftString(since))" }
        if let destinations = event.destinations {
            fields += ", destinations: [" + destinations.map(swiftString).joined(separator: ", ") + "]"
        }
        return fields
    }

    /// The arg's rules after `isPersonalData:`, only those the catalog gives.
    private static func ruleFields(_ arg: CatalogArg) -> String {
        let rules = arg.constraints
        var fields = ""
        if !rules.allowedValues.isEmpty {
            let values = rules.allowedValues.map { value -> String in
                switch value {
                case .string(let text): return ".string(\(swiftString(text)))"
                case .int(let number): return ".int(\(number))"
                }
            }
            fields += ", allowedValues: [\(values.joined(separator: ", "))]"
        }
        if let minimum = rules.minimum { fields += ", minimum: \(numberText(minimum))" }
        if let maximum = rules.maximum { fields += ", maximum: \(numberText(maximum))" }
        if let pattern = rules.pattern { fields += ", pattern: \(swiftString(pattern))" }
        if let maxLength = rules.maxLength { fields += ", maxLength: \(maxLength)" }
        return fields
    }

    // MARK: The typed struct

    private static func writeStruct(_ event: CatalogEvent, to out: inout SourceBuilder) {
        out.doc(event.description + planNotes(event))
        writeDeprecation(event, renamed: SwiftNaming.upperCamelCase, to: &out)
        out.line("public struct \(typeName(event)): TypedMeasurementEvent, Hashable {")
        out.indented { out in
            out.doc("The event's name on the bus: `\(event.name)`.")
            out.line("public static let eventName: EventName = \(swiftString(event.name))")
            out.line()
            out.doc("The event's type: `.\(caseName(event.type))`.")
            out.line("public static let eventType: EventType = .\(caseName(event.type))")
            out.line()
            out.doc(event.category.map { "The event's category: `\($0)`." } ?? "The event's category: none.")
            out.line("public static let eventCategory: String? = \(event.category.map(swiftString) ?? "nil")")
            for arg in event.args where !arg.constraints.allowedValues.isEmpty {
                out.line()
                writeValuesEnum(arg, to: &out)
            }
            for arg in event.args {
                out.line()
                out.doc(arg.description + (arg.isPersonalData ? "\n\nPersonal data." : "") + constraintNotes(arg))
                out.line("public var \(property(arg)): \(swiftType(arg, in: nil))")
            }
            out.line()
            if event.args.isEmpty {
                out.doc("Makes the event; it has no arguments.")
                out.line("public init() {}")
            } else {
                out.doc("Makes the event from its arguments.")
                writeParameterDocs(event.args, to: &out)
                out.line("public init(\(parameters(event.args, in: nil))) {")
                out.indented { out in
                    for arg in event.args { out.line("self.\(property(arg)) = \(property(arg))") }
                }
                out.line("}")
            }
            out.line()
            writeRecoveringInit(event, to: &out)
            out.line()
            writeArgs(event, to: &out)
        }
        out.line("}")
    }

    private static func writeRecoveringInit(_ event: CatalogEvent, to out: inout SourceBuilder) {
        out.doc("The typed form of `event`, or `nil` when it has another name or an arg is missing or of another type.")
        out.line("///")
        out.line("/// - Parameter event: A measurement event received from the bus.")
        out.line("public init?(_ event: MeasurementEvent) {")
        out.indented { out in
            out.line("guard event.name == Self.eventName else { return nil }")
            for arg in event.args {
                let read =
                    arg.constraints.allowedValues.isEmpty
                    ? valueAccessor(arg.type)
                    : "\(valueAccessor(arg.type)).flatMap(\(valuesTypeName(arg)).init(rawValue:))"
                if arg.isOptional {
                    out.line("if let value = event.args[\(swiftString(arg.name))] {")
                    out.indented { out in
                        out.line("guard let value = value.\(read) else { return nil }")
                        out.line("self.\(property(arg)) = value")
                    }
                    out.line("} else {")
                    out.indented { out in out.line("self.\(property(arg)) = nil") }
                    out.line("}")
                } else {
                    out.line("guard let value = event.args[\(swiftString(arg.name))]?.\(read) else { return nil }")
                    out.line("self.\(property(arg)) = value")
                }
            }
        }
        out.line("}")
    }

    private static func writeArgs(_ event: CatalogEvent, to out: inout SourceBuilder) {
        let required = event.args.filter { !$0.isOptional }
        let optional = event.args.filter(\.isOptional)
        out.doc("The event's arguments, keyed by their catalog names.")
        let literal =
            required.isEmpty
            ? "[:]"
            : "["
                + required.map { "\(swiftString($0.name)): .\($0.type.rawValue)(\(property($0))\(rawValue($0)))" }
                .joined(
                    separator: ", ") + "]"
        if optional.isEmpty {
            out.line("public var args: EventArgs { \(literal) }")
            return
        }
        out.line("public var args: EventArgs {")
        out.indented { out in
            out.line("var args: EventArgs = \(literal)")
            for arg in optional {
                out.line(
                    "args[\(swiftString(arg.name))] = \(property(arg)).map { .\(arg.type.rawValue)($0\(rawValue(arg))) }"
                )
            }
            out.line("return args")
        }
        out.line("}")
    }

    // MARK: The one-call helper

    private static func writePostHelper(_ event: CatalogEvent, to out: inout SourceBuilder) {
        let properties = Set(event.args.map { SwiftNaming.lowerCamelCase($0.name) })
        func parameter(_ name: String) -> String { properties.contains(name) ? name + "_" : name }
        let center = parameter("center")
        let file = parameter("file")
        let line = parameter("line")
        out.doc(event.description)
        if !event.args.isEmpty {
            writeParameterDocs(event.args, to: &out)
        } else {
            out.line("///")
            out.line("/// - Parameters:")
        }
        out.line("///   - \(center): Where to post; `.default` unless a test isolates it.")
        out.line("///   - \(file): The file that posts, named in tracking-plan violations; leave the default.")
        out.line("///   - \(line): The line that posts, named in tracking-plan violations; leave the default.")
        writeDeprecation(event, renamed: { "post" + SwiftNaming.upperCamelCase($0) }, to: &out)
        let signature =
            (event.args.isEmpty ? "" : parameters(event.args, in: typeName(event)) + ", ")
            + "to \(center): NotificationCenter = .default, "
            + "\(file == "file" ? "file" : "file \(file)"): StaticString = #fileID, "
            + "\(line == "line" ? "line" : "line \(line)"): UInt = #line"
        out.line("public static func post\(typeName(event))(\(signature)) {")
        out.indented { out in
            let arguments = event.args.map {
                "\(SwiftNaming.argumentLabel(SwiftNaming.lowerCamelCase($0.name))): \(property($0))"
            }.joined(separator: ", ")
            out.line("\(typeName(event))(\(arguments)).post(to: \(center), file: \(file), line: \(line))")
        }
        out.line("}")
    }

    /// A `- Parameters:` list with one line per arg, after a blank doc line.
    private static func writeParameterDocs(_ args: [CatalogArg], to out: inout SourceBuilder) {
        out.line("///")
        out.line("/// - Parameters:")
        for arg in args {
            let lines = SourceBuilder.docLines(arg.description)
            out.line("///   - \(SwiftNaming.lowerCamelCase(arg.name)): \(lines.first ?? "")")
            for line in lines.dropFirst() { out.line("///     \(line)") }
        }
    }

    // MARK: The plan's rules

    /// The enum of an arg's allowed values: the typed helpers cannot send another value.
    private static func writeValuesEnum(_ arg: CatalogArg, to out: inout SourceBuilder) {
        out.doc("The values `\(arg.name)` may take.")
        out.line("public enum \(valuesTypeName(arg)): \(arg.type.swiftType), CaseIterable, Hashable, Sendable {")
        out.indented { out in
            for value in arg.constraints.allowedValues {
                let literal: String
                switch value {
                case .string(let text): literal = swiftString(text)
                case .int(let number): literal = String(number)
                }
                out.line("case \(SwiftNaming.escaped(SwiftNaming.caseName(for: value))) = \(literal)")
            }
        }
        out.line("}")
    }

    /// `@available(*, deprecated, …)` for a deprecated event's declarations; `renamed` makes
    /// the replacement's declaration name from its event name.
    private static func writeDeprecation(
        _ event: CatalogEvent, renamed: (String) -> String, to out: inout SourceBuilder
    ) {
        guard let deprecation = event.deprecation else { return }
        var attribute = "@available(*, deprecated"
        if let replacement = deprecation.replacement {
            let name = renamed(replacement)
            let qualified = deprecation.replacementModule.map { "\($0)Events.\(name)" } ?? name
            attribute += ", renamed: \(swiftString(qualified))"
        }
        let message =
            "The tracking plan deprecates \(event.name)"
            + (deprecation.replacement.map { "; post \($0) instead." } ?? ".")
        out.line(attribute + ", message: \(swiftString(message)))")
    }

    private static func replacementIdentifier(_ name: String) -> String {
        SwiftNaming.escaped(SwiftNaming.lowerCamelCase(name))
    }

    /// The owner and version of an event, for its type's doc comment.
    private static func planNotes(_ event: CatalogEvent) -> String {
        var notes: [String] = []
        if let owner = event.owner { notes.append("Owner: \(owner).") }
        if let since = event.since { notes.append("Since: \(since).") }
        return notes.isEmpty ? "" : "\n\n" + notes.joined(separator: " ")
    }

    /// The rules beyond an arg's type, for its property's doc comment.
    private static func constraintNotes(_ arg: CatalogArg) -> String {
        let rules = arg.constraints
        var notes: [String] = []
        switch (rules.minimum, rules.maximum) {
        case (let minimum?, let maximum?): notes.append("From \(numberText(minimum)) to \(numberText(maximum)).")
        case (let minimum?, nil): notes.append("At least \(numberText(minimum)).")
        case (nil, let maximum?): notes.append("At most \(numberText(maximum)).")
        case (nil, nil): break
        }
        if let pattern = rules.pattern { notes.append("Matches `\(pattern)`.") }
        if let maxLength = rules.maxLength { notes.append("At most \(maxLength) characters.") }
        return notes.isEmpty ? "" : "\n\n" + notes.joined(separator: " ")
    }

    // MARK: Names and types

    /// A deprecated event's name as a literal, so that the module's tables do not use the
    /// deprecated constant (a warning in the generated file); other events by their constant.
    private static func reference(_ event: CatalogEvent) -> String {
        event.deprecation == nil ? identifier(event) : swiftString(event.name)
    }

    /// Names that would hide a type the event's struct uses get a `Value` suffix.
    private static let typeNamesTakenInStructs: Set<String> =
        GeneratedNameCheck.typeNamesUsedByGeneratedCode.union([
            "Any", "CaseIterable", "Hashable", "Protocol", "RawRepresentable", "Self", "Sendable", "Type",
        ])

    /// The enum of an arg's allowed values: `source` → `Source`.
    static func valuesTypeName(_ arg: CatalogArg) -> String {
        let name = SwiftNaming.upperCamelCase(arg.name)
        return typeNamesTakenInStructs.contains(name) ? name + "Value" : name
    }

    private static func identifier(_ event: CatalogEvent) -> String {
        SwiftNaming.escaped(SwiftNaming.lowerCamelCase(event.name))
    }
    private static func typeName(_ event: CatalogEvent) -> String { SwiftNaming.upperCamelCase(event.name) }
    private static func property(_ arg: CatalogArg) -> String {
        SwiftNaming.escaped(SwiftNaming.lowerCamelCase(arg.name))
    }

    /// The property's type; an arg with `values` has its own enum, named from outside the
    /// event's struct through `structName`.
    private static func swiftType(_ arg: CatalogArg, in structName: String?) -> String {
        let base =
            arg.constraints.allowedValues.isEmpty
            ? arg.type.swiftType : (structName.map { $0 + "." } ?? "") + valuesTypeName(arg)
        return base + (arg.isOptional ? "?" : "")
    }

    private static func parameters(_ args: [CatalogArg], in structName: String?) -> String {
        args.map { "\(property($0)): \(swiftType($0, in: structName))" + ($0.isOptional ? " = nil" : "") }.joined(
            separator: ", ")
    }

    /// `.rawValue` after a value of an arg with its own enum.
    private static func rawValue(_ arg: CatalogArg) -> String {
        arg.constraints.allowedValues.isEmpty ? "" : ".rawValue"
    }

    private static func valueAccessor(_ type: CatalogArgType) -> String {
        switch type {
        case .string: return "stringValue"
        case .int: return "intValue"
        case .double: return "doubleValue"
        case .bool: return "boolValue"
        }
    }

    private static func caseName(_ type: EventType) -> String {
        switch type {
        case .activity: return "activity"
        case .click: return "click"
        case .impression: return "impression"
        case .redirect: return "redirect"
        case .userAction: return "userAction"
        }
    }
}

/// A Swift string literal for any text: quotes, backslashes and control characters escaped.
func swiftString(_ text: String) -> String {
    var literal = "\""
    for scalar in text.unicodeScalars {
        switch scalar {
        case "\"": literal += "\\\""
        case "\\": literal += "\\\\"
        case "\n": literal += "\\n"
        case "\r": literal += "\\r"
        case "\t": literal += "\\t"
        case _ where scalar.value < 0x20 || scalar.value == 0x7F:
            literal += "\\u{\(String(scalar.value, radix: 16, uppercase: true))}"
        default: literal.unicodeScalars.append(scalar)
        }
    }
    return literal + "\""
}
