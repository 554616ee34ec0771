import Foundation
import MeasurementEvents
import MeasurementEventsAggregator
import MeasurementEventsJSON

/// All catalogs of a package, validated together: each file on its own (``CatalogReader``),
/// then the rules that span files — event names unique across modules, no `<Module>Events` enum
/// named like another module, and a folder for every module (`Sources/<Module>/`, or the target's
/// `path:` in the manifest, see ``ModuleFolders``).
///
/// ```swift
/// let set = try CatalogSet.load(packageRoot: URL(fileURLWithPath: "."))
/// for problem in set.diagnostics { print(problem) }
/// ```
package struct CatalogSet: Sendable {
    /// Every catalog that could be read, sorted by module name.
    package var catalogs: [Catalog]
    /// Every problem of every catalog, by file and position. Empty means valid.
    package var diagnostics: [CatalogDiagnostic]

    /// The folder of catalogs, relative to the package root.
    static let catalogFolder = "Events"

    /// Reads `Events/*.json` under `packageRoot` and validates them together.
    ///
    /// - Parameters:
    ///   - packageRoot: the folder holding `Events/` and the modules' folders.
    ///   - moduleFolders: where each module's sources are; `nil` reads the catalogs without
    ///     checking that each module has a folder (for readers that write nothing, like the inspector).
    /// - Returns: the catalogs and every problem found in them; invalid catalogs do not throw.
    /// - Throws: ``GeneratorError`` when the folder is missing or a file cannot be read.
    package static func load(packageRoot: URL, moduleFolders: ModuleFolders? = ModuleFolders())
        throws(GeneratorError) -> CatalogSet
    {
        let folder = packageRoot.appendingPathComponent(catalogFolder, isDirectory: true)
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: folder.path, isDirectory: &isDirectory), isDirectory.boolValue
        else {
            throw GeneratorError(
                "found no \(catalogFolder)/ folder in \(packageRoot.path), expected catalogs as \(catalogFolder)/<Module>.json (is --package-path the package root?)"
            )
        }
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".json") }
                .sorted()
        } catch {
            throw GeneratorError("cannot list \(folder.path): \(error.localizedDescription)")
        }
        var sources: [(path: String, bytes: [UInt8])] = []
        for name in names {
            let url = folder.appendingPathComponent(name)
            guard let data = FileManager.default.contents(atPath: url.path) else {
                throw GeneratorError("cannot read \(catalogFolder)/\(name)")
            }
            sources.append(("\(catalogFolder)/\(name)", Array(data)))
        }
        guard let moduleFolders else { return validate(sources: sources, hasModuleFolder: { _ in true }) }
        return validate(sources: sources, moduleFolders: moduleFolders) { module in
            var isDirectory: ObjCBool = false
            let path = packageRoot.appendingPathComponent(moduleFolders.folder(of: module), isDirectory: true).path
            return FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) && isDirectory.boolValue
        }
    }

    /// Validates catalogs given as bytes, without touching the file system.
    ///
    /// - Parameters:
    ///   - sources: each catalog's path relative to the package root, and its bytes.
    ///   - moduleFolders: where each module's sources are; sets each catalog's ``Catalog/sourceFolder``.
    ///   - hasModuleFolder: whether the module's folder exists for a module name.
    /// - Returns: the catalogs and every problem found in them.
    package static func validate(
        sources: [(path: String, bytes: [UInt8])], moduleFolders: ModuleFolders = ModuleFolders(),
        hasModuleFolder: (String) -> Bool
    ) -> CatalogSet {
        var catalogs: [Catalog] = []
        var diagnostics: [CatalogDiagnostic] = []
        for source in sources.sorted(by: { $0.path < $1.path }) {
            let result = CatalogReader.read(path: source.path, bytes: source.bytes)
            diagnostics += result.diagnostics
            if var catalog = result.catalog {
                catalog.sourceFolder = moduleFolders.folder(of: catalog.module)
                catalogs.append(catalog)
            }
        }
        var declared: [String: (file: String, event: CatalogEvent)] = [:]
        let catalogsByModule = Dictionary(catalogs.map { ($0.module, $0) }, uniquingKeysWith: { first, _ in first })
        for catalog in catalogs {
            // An app that imports both modules would see the type and the module under one name.
            if let other = catalogsByModule[catalog.module + "Events"] {
                diagnostics.append(
                    CatalogDiagnostic(
                        file: catalog.path, position: catalog.modulePosition, path: "module",
                        found:
                            "\(quoted(catalog.module)), whose enum \(catalog.module)Events has the name of the module \(other.module) (\(other.path))",
                        expected: "module names that differ from every module's <Module>Events enum"))
            }
            if isSwiftIdentifier(catalog.module), !hasModuleFolder(catalog.module) {
                diagnostics.append(
                    CatalogDiagnostic(
                        file: catalog.path, position: catalog.modulePosition, path: "module",
                        found: "\(quoted(catalog.module)), but the package has no folder \(catalog.sourceFolder)/",
                        expected:
                            "a module with a \(catalog.sourceFolder)/ folder to write events_\(catalog.module).swift into (Sources/<Module>/, or the target's path: in Package.swift)"
                    ))
            }
            var seenInThisFile: Set<String> = []
            for event in catalog.events where seenInThisFile.insert(event.name).inserted {
                if let first = declared[event.name], first.file != catalog.path {
                    diagnostics.append(
                        CatalogDiagnostic(
                            file: catalog.path, position: event.namePosition,
                            path: [.key("events"), .index(event.indexInCatalog), .key("name")],
                            found:
                                "\(quoted(event.name)), which \(first.file):\(first.event.namePosition) (events[\(first.event.indexInCatalog)].name) declares too",
                            expected: "each event declared in one catalog only"))
                } else if declared[event.name] == nil {
                    declared[event.name] = (catalog.path, event)
                }
            }
        }
        resolveReplacements(&catalogs, declared: declared.mapValues(\.file), diagnostics: &diagnostics)
        return CatalogSet(catalogs: catalogs.sorted { $0.module < $1.module }, diagnostics: diagnostics.sorted())
    }

    /// A deprecated event's replacement must be a planned event other than itself; the module
    /// that declares it is noted when it is another, for the generated `renamed:`.
    private static func resolveReplacements(
        _ catalogs: inout [Catalog], declared: [String: String], diagnostics: inout [CatalogDiagnostic]
    ) {
        let modules = Dictionary(catalogs.map { ($0.path, $0.module) }, uniquingKeysWith: { first, _ in first })
        for catalogIndex in catalogs.indices {
            let catalog = catalogs[catalogIndex]
            for eventIndex in catalog.events.indices {
                let event = catalog.events[eventIndex]
                guard let replacement = event.deprecation?.replacement else { continue }
                let path: [JSONPathComponent] = [
                    .key("events"), .index(event.indexInCatalog), .key("deprecated"), .key("replacement"),
                ]
                if replacement == event.name || declared[replacement] == nil {
                    diagnostics.append(
                        CatalogDiagnostic(
                            file: catalog.path, position: event.deprecation!.replacementPosition, path: path,
                            found: replacement == event.name
                                ? "the event itself" : "\(quoted(replacement)), which no catalog declares",
                            expected: "the name of another planned event"))
                    catalogs[catalogIndex].events[eventIndex].deprecation?.replacement = nil
                } else if let file = declared[replacement], file != catalog.path {
                    catalogs[catalogIndex].events[eventIndex].deprecation?.replacementModule = modules[file]
                }
            }
        }
    }
}

/// A problem outside the catalogs' content: a missing folder, an unreadable or unwritable file.
package struct GeneratorError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong, naming the file or folder.
    package var message: String

    /// Makes an error.
    ///
    /// - Parameter message: what went wrong, naming the file or folder.
    package init(_ message: String) {
        self.message = message
    }

    /// The message.
    package var description: String { message }
}
