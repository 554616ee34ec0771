import EncoderTestSupport
import XCTest

@testable import MeasurementEventsGA4

// The Measurement Protocol reference's "device" (developers.google.com/analytics/devguides/
// collection/protocol/ga4/reference): category ("desktop", "tablet", "mobile", …),
// operating_system, operating_system_version, model, brand.
final class GA4DeviceTests: XCTestCase {
    func testEveryMacModelFamilyIsADesktop() {
        let macs = [
            "Mac14,2", "Mac15,3", "Mac16,10", "MacBook10,1", "MacBookAir10,1", "MacBookPro18,3", "Macmini9,1",
            "MacPro7,1", "iMac21,1", "iMac24,2", "iMacPro1,1", "VirtualMac2,1",
        ]
        for model in macs {
            XCTAssertEqual(GA4Encoder.deviceCategory(model: model, osName: "macOS"), "desktop", model)
        }
    }

    func testIPadsAreTabletsAndIPhonesAndIPodsAreMobile() {
        XCTAssertEqual(GA4Encoder.deviceCategory(model: "iPad13,18", osName: "iOS"), "tablet")
        XCTAssertEqual(GA4Encoder.deviceCategory(model: "iPhone15,2", osName: "iOS"), "mobile")
        XCTAssertEqual(GA4Encoder.deviceCategory(model: "iPod9,1", osName: "iOS"), "mobile")
    }

    func testAMacWhoseModelSaysNothingIsStillADesktop() {
        XCTAssertEqual(GA4Encoder.deviceCategory(model: "arm64", osName: "macOS"), "desktop")
        XCTAssertEqual(GA4Encoder.deviceCategory(model: nil, osName: "macOS"), "desktop")
    }

    func testNoCategoryWhereNeitherModelNorSystemTells() {
        XCTAssertNil(GA4Encoder.deviceCategory(model: "Watch7,1", osName: "watchOS"))
        XCTAssertNil(GA4Encoder.deviceCategory(model: "AppleTV14,1", osName: "tvOS"))
        XCTAssertNil(GA4Encoder.deviceCategory(model: "RealityDevice14,1", osName: "visionOS"))
        XCTAssertNil(GA4Encoder.deviceCategory(model: "x86_64", osName: "Linux"))
        XCTAssertNil(GA4Encoder.deviceCategory(model: "arm64", osName: "iOS"))
    }

    func testAnIPadAppOnAnIMacIsSentAsAMacDesktop() {
        let body = EncoderSamples.body(
            GA4Encoder(measurementID: "G-TEST123", apiSecret: "SECRET"), EncoderSamples.trackOnAMac)
        XCTAssertTrue(
            body.contains(
                #""device":{"brand":"Apple","category":"desktop","language":"en-US","model":"iMac21,1","operating_system":"macOS","operating_system_version":"14.2.1"}"#
            ), body)
    }
}
