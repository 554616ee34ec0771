import Foundation

/// The three operations of `measurement-events` on one package: `generate`, `check` and `plan`.
///
/// ```swift
/// let generator = PackageGenerator(packageRoot: URL(fileURLWithPath: "/path/to/App"))
/// let report = try generator.generate()      // writes Sources/<Module>/events_<Module>.swift (+ parts)
/// let stale = try generator.check().outdated // what generate would change; writes nothing
/// print(try generator.plan(format: .markdown))
/// ```
///
/// Every catalog is validated before anything is written: when any catalog is invalid, the
/// operation throws ``GeneratorFailure/invalidCatalogs(_:)`` with every problem and no file is touched.
package struct PackageGenerator: Sendable {
    /// The folder holding `Events/` and `Sources/`.
    package var packageRoot: URL
    /// Where each module's sources are: `Sources/<Module>` unless the manifest gives a `path:`.
    package var moduleFolders: ModuleFolders

    /// Makes a generator for the package at `packageRoot`.
    ///
    /// - Parameters:
    ///   - packageRoot: the folder holding `Events/` and `Sources/`.
    ///   - moduleFolders: where each module's sources are, as the manifest says
    ///     (``ModuleFolders/read(packageRoot:)``); the generated files are written there.
    package init(packageRoot: URL, moduleFolders: ModuleFolders = ModuleFolders()) {
        self.packageRoot = packageRoot
        self.moduleFolders = moduleFolders
    }

    /// What `generate` did to each file, by path relative to the package root.
    package struct GenerateReport: Hashable, Sendable {
        /// Generated files written because their content changed.
        package var written: [String] = []
        /// Generated files left as they were, already up to date.
        package var unchanged: [String] = []
        /// Generated files no catalog generates any more: a part left over from a larger catalog
        /// (removed by any `generate` of its catalog), or a file whose catalog is gone (removed by
        /// a `generate` of all catalogs).
        package var removed: [String] = []
    }

    /// What `check` found.
    package struct CheckReport: Hashable, Sendable {
        /// Generated files whose content differs from what `generate` would write.
        package var stale: [String] = []
        /// Generated files that do not exist yet.
        package var missing: [String] = []
        /// Generated files no catalog generates any more: the catalog is gone or generates into
        /// another folder, or the file is a part left over from a larger catalog.
        package var orphaned: [String] = []
        /// Generated files that match their catalog.
        package var upToDate: [String] = []

        /// Every stale, missing and orphaned file, sorted.
        package var outdated: [String] { (stale + missing + orphaned).sorted() }
        /// Whether nothing is out of date: `generate` would change nothing.
        package var isUpToDate: Bool { stale.isEmpty && missing.isEmpty && orphaned.isEmpty }
    }

    /// Validates every catalog; writes the generated files of each catalog in `modules` (all when
    /// `nil`) whose content changed, and removes its parts left over from a larger catalog.
    ///
    /// `modules` may name a catalog by module (`DemoFeed`), file name (`DemoFeed.json`) or path
    /// (`Events/DemoFeed.json`).
    ///
    /// - Parameter modules: the catalogs to generate; `nil` or empty for all of them, which also
    ///   removes generated files whose catalog is gone.
    /// - Returns: what was written, left unchanged and removed.
    /// - Throws: ``GeneratorFailure`` when a catalog is invalid or unknown, or a file cannot be written.
    package func generate(modules: [String]? = nil) throws(GeneratorFailure) -> GenerateReport {
        let catalogs = try validCatalogs(selecting: modules)
        var report = GenerateReport()
        var leftovers: [String] = []
        for catalog in catalogs {
            let files = EventsFileWriter.files(for: catalog)
            for file in files {
                let url = packageRoot.appendingPathComponent(file.path)
                let contents = Data(file.contents.utf8)
                if FileManager.default.contents(atPath: url.path) == contents {
                    report.unchanged.append(file.path)
                    continue
                }
                do {
                    try contents.write(to: url, options: .atomic)
                } catch {
                    throw .environment(GeneratorError("cannot write \(file.path): \(error.localizedDescription)"))
                }
                report.written.append(file.path)
            }
            leftovers += leftoverParts(of: catalog, writing: files)
        }
        if modules?.isEmpty ?? true { leftovers += orphanedFiles(catalogs: catalogs) }
        for path in leftovers {
            do {
                try FileManager.default.removeItem(at: packageRoot.appendingPathComponent(path))
            } catch {
                throw .environment(GeneratorError("cannot remove \(path): \(error.localizedDescription)"))
            }
            report.removed.append(path)
        }
        return report
    }

    /// The files this tool wrote (they start with its header) for `module` in `folder`, relative
    /// to the package root: `events_<Module>.swift` and its parts `events_<Module>+<n>.swift`.
    private func generatedFiles(of module: String, in folder: String) -> [String] {
        let names =
            (try? FileManager.default.contentsOfDirectory(
                atPath: packageRoot.appendingPathComponent(folder).path)) ?? []
        return names.filter { Catalog.isGeneratedFileName($0, module: module) }.sorted().map { "\(folder)/\($0)" }
            .filter { path in
                FileManager.default.contents(atPath: packageRoot.appendingPathComponent(path).path)?
                    .starts(with: Data(EventsFileWriter.headerPrefix.utf8)) ?? false
            }
    }

    /// The generated files of `catalog` on disk that are not among `files`, what it writes now:
    /// the parts a larger version of the catalog needed.
    private func leftoverParts(of catalog: Catalog, writing files: [EventsFileWriter.GeneratedFile]) -> [String] {
        let written = Set(files.map(\.path))
        return generatedFiles(of: catalog.module, in: catalog.sourceFolder).filter { !written.contains($0) }
    }

    /// Generated files in `Sources/<Module>/` or a target's own folder whose catalog is gone, or
    /// now generates into another folder.
    private func orphanedFiles(catalogs: [Catalog]) -> [String] {
        struct Place: Hashable, Comparable {
            var folder: String
            var module: String
            static func < (a: Place, b: Place) -> Bool { (a.folder, a.module) < (b.folder, b.module) }
        }
        let sources = packageRoot.appendingPathComponent("Sources")
        let modules = (try? FileManager.default.contentsOfDirectory(atPath: sources.path)) ?? []
        var places = Set(modules.map { Place(folder: "Sources/\($0)", module: $0) })
        places.formUnion(moduleFolders.custom.map { Place(folder: $0.value, module: $0.key) })
        places.subtract(catalogs.map { Place(folder: $0.sourceFolder, module: $0.module) })
        return places.sorted().flatMap { generatedFiles(of: $0.module, in: $0.folder) }
    }

    /// Compares every generated file with what `generate` would write. Writes nothing.
    ///
    /// - Returns: the stale, missing, orphaned and up-to-date files; a part left over from a
    ///   larger catalog is orphaned.
    /// - Throws: ``GeneratorFailure`` when a catalog is invalid or cannot be read.
    package func check() throws(GeneratorFailure) -> CheckReport {
        var report = CheckReport()
        let catalogs = try validCatalogs(selecting: nil)
        report.orphaned = orphanedFiles(catalogs: catalogs)
        for catalog in catalogs {
            let files = EventsFileWriter.files(for: catalog)
            for file in files {
                let url = packageRoot.appendingPathComponent(file.path)
                guard let existing = FileManager.default.contents(atPath: url.path) else {
                    report.missing.append(file.path)
                    continue
                }
                if existing == Data(file.contents.utf8) {
                    report.upToDate.append(file.path)
                } else {
                    report.stale.append(file.path)
                }
            }
            report.orphaned += leftoverParts(of: catalog, writing: files)
        }
        return report
    }

    /// What `lint` found in `Sources/`.
    package struct LintReport: Hashable, Sendable {
        /// Raw posts of names no catalog declares, by file path and position.
        package var undeclared: [UndeclaredPost] = []
        /// How many Swift files were read.
        package var scannedFiles = 0
        /// The folders read, relative to the package root: `Sources/` and the folders of catalogued
        /// modules outside it.
        package var scannedFolders: [String] = []
    }

    /// Reads every Swift file under `Sources/`, and in the folders of catalogued modules outside it,
    /// for raw `MeasurementEvent.post("…")` calls whose name no catalog declares. Writes nothing.
    ///
    /// - Returns: the undeclared posts, sorted by file and position.
    /// - Throws: ``GeneratorFailure`` when a catalog is invalid or cannot be read.
    package func lint() throws(GeneratorFailure) -> LintReport {
        let catalogs = try validCatalogs(selecting: nil)
        let declared = Set(catalogs.flatMap { $0.events.map(\.name) })
        var report = LintReport()
        let folders = ["Sources"] + Set(catalogs.map(\.sourceFolder).filter { !$0.hasPrefix("Sources/") }).sorted()
        report.scannedFolders = folders.map { $0 + "/" }
        for folder in folders {
            let url = packageRoot.appendingPathComponent(folder)
            let files = (FileManager.default.enumerator(atPath: url.path)?.allObjects as? [String] ?? [])
                .filter { $0.hasSuffix(".swift") }.sorted()
            for file in files {
                guard let data = FileManager.default.contents(atPath: url.appendingPathComponent(file).path) else {
                    throw .environment(GeneratorError("cannot read \(folder)/\(file)"))
                }
                report.scannedFiles += 1
                report.undeclared += UndeclaredPost.find(
                    in: String(decoding: data, as: UTF8.self), path: "\(folder)/\(file)", declared: declared)
            }
        }
        return report
    }

    /// The tracking plan of every catalog.
    ///
    /// - Parameter format: Markdown for people, JSON for tools.
    /// - Returns: the plan, as ``TrackingPlanWriter`` writes it.
    /// - Throws: ``GeneratorFailure`` when a catalog is invalid or cannot be read.
    package func plan(format: TrackingPlanWriter.Format) throws(GeneratorFailure) -> String {
        TrackingPlanWriter.plan(try validCatalogs(selecting: nil), format: format)
    }

    /// The plan as an HTML page, with the coverage the files record.
    ///
    /// - Parameter coverageFiles: files the test kit wrote, one posted event name a line.
    package func htmlPlan(coverageFiles: [URL]) throws(GeneratorFailure) -> String {
        let catalogs = try validCatalogs(selecting: nil)
        let coverage: PlanCoverage?
        do {
            coverage =
                coverageFiles.isEmpty
                ? nil : PlanCoverage(catalogs: catalogs, posted: try PlanCoverage.postedNames(in: coverageFiles))
        } catch { throw .environment(error) }
        return HTMLPlanWriter.page(catalogs, coverage: coverage)
    }

    /// The plan coverage the files record.
    ///
    /// - Parameter coverageFiles: files the test kit wrote, one posted event name a line.
    package func coverage(files coverageFiles: [URL]) throws(GeneratorFailure) -> PlanCoverage {
        let catalogs = try validCatalogs(selecting: nil)
        do {
            return PlanCoverage(catalogs: catalogs, posted: try PlanCoverage.postedNames(in: coverageFiles))
        } catch { throw .environment(error) }
    }

    private func validCatalogs(selecting names: [String]?) throws(GeneratorFailure) -> [Catalog] {
        let set: CatalogSet
        do { set = try CatalogSet.load(packageRoot: packageRoot, moduleFolders: moduleFolders) } catch {
            throw .environment(error)
        }
        guard set.diagnostics.isEmpty else { throw .invalidCatalogs(set.diagnostics) }
        guard let names, !names.isEmpty else { return set.catalogs }
        var selected: [Catalog] = []
        for name in names {
            guard let catalog = set.catalogs.first(where: { $0.module == moduleName(fromPath: name) }) else {
                throw .unknownCatalog(name, known: set.catalogs.map(\.module))
            }
            if !selected.contains(catalog) { selected.append(catalog) }
        }
        return selected
    }
}

/// Why an operation of ``PackageGenerator`` did not complete.
package enum GeneratorFailure: Error, Hashable, Sendable, CustomStringConvertible {
    /// Every problem of every catalog; nothing was written.
    case invalidCatalogs([CatalogDiagnostic])
    /// A catalog was named that the package does not have.
    case unknownCatalog(String, known: [String])
    /// The file system got in the way: a missing folder, an unreadable or unwritable file.
    case environment(GeneratorError)

    /// Every problem, one a line, in the compilers' format where it has a position.
    package var description: String {
        switch self {
        case .invalidCatalogs(let diagnostics):
            let files = Set(diagnostics.map(\.file)).count
            let lines = diagnostics.map(\.description)
            return
                (lines + [
                    "\(diagnostics.count) problem\(diagnostics.count == 1 ? "" : "s") in \(files) catalog\(files == 1 ? "" : "s"); no file was written"
                ]).joined(separator: "\n")
        case .unknownCatalog(let name, let known):
            let hint =
                closestMatch(to: moduleName(fromPath: name), among: known).map { " (did you mean '\($0)'?)" } ?? ""
            let list = known.isEmpty ? "none" : known.joined(separator: ", ")
            return "found no catalog '\(name)', expected one of the package's catalogs (\(list))\(hint)"
        case .environment(let error):
            return error.description
        }
    }
}
