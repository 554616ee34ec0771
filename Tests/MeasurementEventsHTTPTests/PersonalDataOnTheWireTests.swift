import Foundation
import LoopbackCollector
import MeasurementEvents
import MeasurementEventsAggregator
import MeasurementEventsGenerator
import XCTest

@testable import MeasurementEventsHTTP

/// Every arg a catalog of this repository marks `"pii"` (the package's own, the generator's
/// golden catalogs, the consumer package in `Tests/Fixtures/ConsumerApp`), posted in clear to an
/// aggregator given those catalogs and nothing else, is in clear nowhere: not in the HTTP
/// tracker's queue on disk, not in the JSON Lines file, not in what the server receives.
final class PersonalDataOnTheWireTests: LoopbackTestCase {
    private static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()
    private static let packages = ["", "Tests/MeasurementEventsGeneratorGolden", "Tests/Fixtures/ConsumerApp"]

    private func repositoryCatalogs() throws -> [EventCatalog] {
        try Self.packages.flatMap { package in
            // The catalogs alone: where each module's folder is, is the generator tests' concern.
            let set = try CatalogSet.load(packageRoot: Self.root.appendingPathComponent(package), moduleFolders: nil)
            XCTAssertEqual(set.diagnostics, [], package)
            return set.catalogs.map(\.eventCatalog)
        }
    }

    /// A value of `arg`'s type; a personal one is a text found nowhere else.
    private func value(of arg: ArgSpec, marker: String) -> any EventValueConvertible {
        switch arg.type {
        case .string: return arg.isPersonalData ? marker : "plain"
        case .int: return 7
        case .double: return 2.5
        case .bool: return true
        }
    }

    func testNoPersonalArgOfAnyCatalogIsInClearOnDiskOrOnTheWire() throws {
        let catalogs = try repositoryCatalogs()
        let center = NotificationCenter()
        let http = try HTTPTracker(
            encoder: SegmentEncoder(writeKey: "key", baseURL: collector.baseURL),
            directory: directory.appendingPathComponent("http"), configuration: testConfiguration(flushAt: 10_000))
        let lines = try JSONLinesFileTracker(url: directory.appendingPathComponent("log/events.jsonl"))
        var configuration = EventAggregator.Configuration.testing
        configuration.catalogs = catalogs
        configuration.personalDataSalt = "wire-test"
        let aggregator = EventAggregator(
            center: center, filter: .allowAll, trackers: [http, lines], configuration: configuration)
        XCTAssertEqual(aggregator.registeredCatalogs.problems, [])
        aggregator.start()

        var markers: [String] = []
        for catalog in catalogs {
            for event in catalog.events where event.args.contains(where: \.isPersonalData) {
                var args: [String: any EventValueConvertible] = [:]
                for arg in event.args {
                    let marker = "pii-\(markers.count)-in-clear"
                    if arg.isPersonalData { markers.append(marker) }
                    args[arg.name] = value(of: arg, marker: marker)
                }
                MeasurementEvent.post(event.name, type: event.type, args: args, to: center)
            }
        }
        XCTAssertEqual(
            markers.count, 8,
            "Shop's email and phone, its legacy banner's email, Checkout's email and phone; "
                + "the standard events' receipt, message and url")
        aggregator.waitUntilDelivered()

        // On disk: the queue, before anything is sent, and the JSON Lines file.
        let queue = try queueFiles(directory.appendingPathComponent("http")).map {
            try String(
                decoding: Data(contentsOf: directory.appendingPathComponent("http/queue/\($0)")), as: UTF8.self)
        }.joined()
        let file = try String(contentsOf: directory.appendingPathComponent("log/events.jsonl"), encoding: .utf8)
        // On the wire.
        aggregator.flush()
        XCTAssertTrue(http.waitUntilDelivered(timeout: 10))
        let wire = collector.requests.map(\.bodyText).joined()

        for (place, text) in [("queue", queue), ("JSON Lines file", file), ("wire", wire)] {
            XCTAssertFalse(text.isEmpty, place)
            let inClear = markers.filter { text.contains($0) }
            XCTAssertEqual(inClear, [], "personal data in clear in the \(place)")
        }
        for marker in markers {
            let hash = PersonalDataProcessor.hashed(.string(marker), salt: "wire-test")
            XCTAssertTrue(wire.contains(hash), "\(marker) reached the server hashed")
            XCTAssertTrue(file.contains(hash), "\(marker) reached the file hashed")
        }
    }
}
