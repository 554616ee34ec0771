#if os(macOS) || os(Linux)
    import Foundation
    import MeasurementEventsGenerator
    import XCTest

    /// The generator's promise, checked on hundreds of random catalogs: a catalog is either
    /// rejected with naming diagnostics (and nothing is written), or its generated file compiles.
    ///
    /// The seed is fixed so that CI is reproducible; `MEASUREMENT_EVENTS_CATALOG_SEED=<n>` runs
    /// another one (`random` for a fresh one, printed with any failure).
    final class RandomCatalogTests: XCTestCase {
        static let validCatalogsToCompile = 220

        func testRandomCatalogsAreRejectedForCollisionsOrCompile() throws {
            let seed = Self.seed()
            var random = RandomCatalog(seed: seed)
            var valid: [String: (json: String, source: String)] = [:]
            var rejected: [(path: String, bytes: [UInt8])] = []
            var index = 0
            while valid.count < Self.validCatalogsToCompile, index < Self.validCatalogsToCompile * 3 {
                let module = ["Feed", "UI", "JSONAPI", "Shop", "Any", "Self_"][index % 6] + "\(index)"
                let json = random.catalogJSON(module: module)
                index += 1
                let path = "Events/\(module).json"
                let set = CatalogSet.validate(sources: [(path, Array(json.utf8))], hasModuleFolder: { _ in true })
                if set.diagnostics.isEmpty, let catalog = set.catalogs.first {
                    valid["events_\(module).swift"] = (json, EventsFileWriter.source(for: catalog))
                    continue
                }
                let unexpected = set.diagnostics.filter { !Self.isNamingDiagnostic($0) }
                XCTAssertEqual(
                    unexpected.map(\.description), [], "seed \(seed): a random catalog has only valid names:\n\(json)")
                rejected.append((path, Array(json.utf8)))
            }
            XCTAssertGreaterThanOrEqual(
                valid.count, Self.validCatalogsToCompile, "seed \(seed): too few valid catalogs")
            XCTAssertGreaterThan(
                rejected.count, 10, "seed \(seed): the near-collisions should make some catalogs invalid")

            let result = try GeneratedSourceCompiler().compile(valid.mapValues(\.source))
            if result.exitCode != 0 {
                let failing = valid.keys.filter { result.diagnostics.contains("/\($0):") }.sorted()
                let catalogs = failing.prefix(3).map { "\($0) from:\n\(valid[$0]!.json)" }.joined(separator: "\n\n")
                XCTFail(
                    "seed \(seed): \(failing.count) generated files do not compile\n\(result.diagnostics.prefix(6_000))\n\n\(catalogs)"
                )
            }
            try assertNothingWritten(for: rejected, seed: seed)
        }

        /// The rejected catalogs, run through the generator as one package: it refuses and writes nothing.
        private func assertNothingWritten(for rejected: [(path: String, bytes: [UInt8])], seed: UInt64) throws {
            let package = try TemporaryPackage(modules: rejected.map { moduleName($0.path) })
            defer { package.remove() }
            for catalog in rejected { try package.write(catalog.path, String(decoding: catalog.bytes, as: UTF8.self)) }
            XCTAssertThrowsError(try PackageGenerator(packageRoot: package.root).generate(), "seed \(seed)")
            let written = try package.snapshot().keys.filter { $0.hasPrefix("Sources/") }
            XCTAssertEqual(written, [], "seed \(seed): a rejected catalog's file was written")
        }

        private func moduleName(_ path: String) -> String {
            String(path.dropFirst("Events/".count).dropLast(".json".count))
        }

        private static func isNamingDiagnostic(_ diagnostic: CatalogDiagnostic) -> Bool {
            ["distinct Swift identifiers", "each event declared once", "another name"].contains {
                diagnostic.expected.contains($0)
            }
        }

        private static func seed() -> UInt64 {
            switch ProcessInfo.processInfo.environment["MEASUREMENT_EVENTS_CATALOG_SEED"] {
            case "random"?: return UInt64.random(in: 0...UInt64.max)
            case let text?: return UInt64(text) ?? 2026
            case nil: return 2026
            }
        }
    }
#endif
