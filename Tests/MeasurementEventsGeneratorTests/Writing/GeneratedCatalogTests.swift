import DemoFeed
import DemoSettings
import Foundation
import MeasurementEvents
import MeasurementEventsAggregator
import MeasurementEventsGenerator
import MeasurementEventsGeneratorGolden
import XCTest

/// The `catalog` value a generated file declares is the catalog it was generated from: what the
/// aggregator registers is what `Events/<Module>.json` says.
final class GeneratedCatalogTests: XCTestCase {
    func testGoldenCatalogValuesEqualTheirJSONCatalogs() throws {
        let byModule = try Dictionary(
            uniqueKeysWithValues: CatalogSet.load(packageRoot: Repository.golden).catalogs.map { ($0.module, $0) })
        XCTAssertEqual(ShopEvents.catalog, byModule["Shop"]?.eventCatalog)
        XCTAssertEqual(MinimalEvents.catalog, byModule["Minimal"]?.eventCatalog)
        XCTAssertEqual(EmptyEvents.catalog, byModule["Empty"]?.eventCatalog)
    }

    func testTheDemoModulesCatalogValuesEqualTheirJSONCatalogs() throws {
        let byModule = try Dictionary(
            uniqueKeysWithValues: CatalogSet.load(packageRoot: Repository.root).catalogs.map { ($0.module, $0) })
        XCTAssertEqual(DemoFeedEvents.catalog, byModule["DemoFeed"]?.eventCatalog)
        XCTAssertEqual(DemoSettingsEvents.catalog, byModule["DemoSettings"]?.eventCatalog)
    }

    func testPersonalDataMarksReachTheCatalogValue() {
        let checkout = ShopEvents.catalog.events.first { $0.name == ShopEvents.shopCheckoutCompleted }
        XCTAssertEqual(checkout?.args.filter(\.isPersonalData).map(\.name), ["email", "phone"])
        XCTAssertEqual(checkout?.args.first { $0.name == "phone" }?.isRequired, false)
        XCTAssertEqual(checkout?.type, .activity)
    }

    func testDestinationsReachTheCatalogValueAndAnEventWithoutThemHasNone() {
        let destinations = Dictionary(
            uniqueKeysWithValues: ShopEvents.catalog.events.map { ($0.name.rawValue, $0.destinations) })
        XCTAssertEqual(destinations["shop/product_viewed"], ["amplitude", "ga4", "debug"])
        XCTAssertEqual(destinations["shop/opened"], ["debug"])
        XCTAssertEqual(destinations["shop/tab_opened"], ["segment_eu", "otlp-collector"])
        XCTAssertEqual(destinations["shop/checkout/completed"], .some(nil))
        XCTAssertEqual(MinimalEvents.catalog.events.map(\.destinations), [nil, nil])
    }
}
