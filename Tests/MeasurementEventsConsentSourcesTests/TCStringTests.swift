import XCTest

@testable import MeasurementEventsConsentSources

/// The TC string decoder against strings IAB Tech Lab published (``PublishedTCStrings``).
final class TCStringTests: XCTestCase {
    func testTheFormatDocumentsExampleDecodesEveryCoreField() throws {
        let tc = try TCString(PublishedTCStrings.formatExample)
        XCTAssertEqual(tc.version, 2)
        XCTAssertEqual(tc.created, 17_489_088_000)  // 2025-06-03T00:00:00Z in deciseconds
        XCTAssertEqual(tc.lastUpdated, 17_489_088_000)
        XCTAssertEqual(tc.cmpId, 880)
        XCTAssertEqual(tc.cmpVersion, 0)
        XCTAssertEqual(tc.consentScreen, 0)
        XCTAssertEqual(tc.consentLanguage, "EN")
        XCTAssertEqual(tc.vendorListVersion, 48)
        XCTAssertEqual(tc.policyVersion, 2)
        XCTAssertTrue(tc.isServiceSpecific)
        XCTAssertFalse(tc.useNonStandardTexts)
        XCTAssertEqual(tc.specialFeatureOptIns, [])
        XCTAssertEqual(tc.purposesConsent, [])
        XCTAssertEqual(tc.purposesLITransparency, [])
        XCTAssertFalse(tc.purposeOneTreatment)
        XCTAssertEqual(tc.publisherCountryCode, "DE")
        XCTAssertEqual(tc.vendorConsents, .init(maxVendorId: 4, isRangeEncoding: false, ranges: [1...4]))
        XCTAssertEqual(tc.vendorLegitimateInterests, .init(maxVendorId: 0, isRangeEncoding: false, ranges: []))
        XCTAssertEqual(tc.publisherRestrictions, [])
    }

    func testEveryPurposeConsentedAndAVendorBitFieldOf1283() throws {
        let tc = try TCString(PublishedTCStrings.allPurposesConsented)
        XCTAssertEqual(tc.cmpId, 309)
        XCTAssertEqual(tc.cmpVersion, 2)
        XCTAssertEqual(tc.consentLanguage, "DE")
        XCTAssertEqual(tc.publisherCountryCode, "DE")
        XCTAssertEqual(tc.vendorListVersion, 91)
        XCTAssertEqual(tc.policyVersion, 5)
        XCTAssertEqual(tc.created, 17_400_096_000)  // 2025-02-20
        XCTAssertEqual(tc.purposesConsent, Set(1...11))
        XCTAssertTrue((1...11).allSatisfy(tc.isPurposeConsented))
        XCTAssertFalse(tc.isPurposeConsented(12))
        XCTAssertEqual(tc.vendorConsents.maxVendorId, 1283)
        XCTAssertFalse(tc.vendorConsents.isRangeEncoding)
        XCTAssertEqual(tc.vendorConsents.ranges.map(\.count).reduce(0, +), 259)
        XCTAssertEqual([1, 4, 6, 8, 10, 11, 12, 13].filter(tc.isVendorConsented), [1, 4, 6, 8, 10, 11, 12, 13])
        XCTAssertEqual([2, 3, 5, 7, 9, 15, 17, 18, 19].filter(tc.isVendorConsented), [])
        XCTAssertEqual([1122, 1126, 1135, 1213, 1283].filter(tc.isVendorConsented), [1122, 1126, 1135, 1213, 1283])
        XCTAssertFalse(tc.isVendorConsented(1284))
        XCTAssertEqual(tc.publisherRestrictions.map(\.purposeId), [7, 6, 5, 4, 3, 2, 11, 10, 9, 8])
        XCTAssertEqual(Set(tc.publisherRestrictions.map(\.restrictionType)), [1])
        XCTAssertEqual(Set(tc.publisherRestrictions.map(\.vendors)), [[1...1283]])
    }

    func testRangeEncodedVendorSectionsDecodeToTheirRanges() throws {
        let tc = try TCString(PublishedTCStrings.someConsentedRangeEncoded)
        XCTAssertEqual(tc.cmpId, 56)
        XCTAssertEqual(tc.consentLanguage, "FR")
        XCTAssertEqual(tc.publisherCountryCode, "BE")
        XCTAssertEqual(tc.vendorListVersion, 93)
        XCTAssertEqual(tc.purposesConsent, [1, 3, 4])
        XCTAssertEqual(tc.purposesLITransparency, [8, 11])
        XCTAssertEqual(
            tc.vendorConsents,
            .init(
                maxVendorId: 1315, isRangeEncoding: true, ranges: [11...13, 24...25, 333...333, 903...903, 1314...1315])
        )
        XCTAssertEqual(
            tc.vendorLegitimateInterests,
            .init(maxVendorId: 136, isRangeEncoding: true, ranges: [10...11, 69...69, 136...136]))
        XCTAssertEqual(
            [10, 11, 13, 14, 24, 26, 333, 903, 1315, 1316].filter(tc.isVendorConsented), [11, 13, 24, 333, 903, 1315])
    }

    /// iabtcf-es asserts these vendors for this string's restriction of purpose 1, type 1 (its
    /// issue 201: one vendor is encoded twice).
    func testPublisherRestrictionsDecodeAsIABTechLabsTestAsserts() throws {
        let tc = try TCString(PublishedTCStrings.publisherRestrictions)
        XCTAssertEqual(tc.version, 2)
        let first = try XCTUnwrap(tc.publisherRestrictions.first)
        XCTAssertEqual(first.purposeId, 1)
        XCTAssertEqual(first.restrictionType, 1)
        XCTAssertEqual(first.vendors.flatMap { Array($0) }, [7, 20, 71, 122, 140, 183])
        XCTAssertEqual(tc.publisherRestrictions.count, 20)
        XCTAssertEqual(tc.purposesConsent, Set(1...10))
        XCTAssertEqual(tc.specialFeatureOptIns, [1, 2])
        XCTAssertEqual(tc.publisherCountryCode, "EU")
        XCTAssertEqual(tc.vendorConsents.ranges.map(\.count).reduce(0, +), 479)
    }

    func testAGlobalScopeStringDecodesWithIsServiceSpecificFalse() throws {
        let tc = try TCString(PublishedTCStrings.globalScopeV20)
        XCTAssertFalse(tc.isServiceSpecific)
        XCTAssertEqual(tc.cmpId, 27)
        XCTAssertEqual(tc.created, tc.lastUpdated)
        XCTAssertEqual(tc.created / 10, 1_582_243_059)  // 2020-02-20T23:57:39Z
        XCTAssertEqual(tc.purposesConsent, [1, 2, 3])
        XCTAssertEqual(tc.vendorConsents, .init(maxVendorId: 8, isRangeEncoding: false, ranges: [2...2, 6...6, 8...8]))
        XCTAssertEqual(tc.vendorLegitimateInterests.ranges, [2...2, 6...6, 8...8])
    }

    func testAVersion1StringIsRefusedAtTheVersionField() {
        XCTAssertThrowsError(try TCString(PublishedTCStrings.version1)) { error in
            let error = error as? TCStringError
            XCTAssertEqual(error?.field, "Version")
            XCTAssertEqual(error?.bitOffset, 0)
            XCTAssertEqual(error?.found, "1")
            XCTAssertEqual(
                error?.description,
                "Version at bit 0: found 1; expected 2 (a TCF v2 core segment; v1 strings are invalid since 30 "
                    + "September 2020)")
        }
    }

    func testAStringCutInsideTheVendorBitFieldNamesTheFieldAndWhereItStarts() {
        // 60 characters are 360 bits; the vendor bit field starts at bit 230 and needs 1283.
        let cut = String(PublishedTCStrings.allPurposesConsented.prefix(60))
        XCTAssertThrowsError(try TCString(cut)) { error in
            XCTAssertEqual(
                error as? TCStringError,
                TCStringError(
                    field: "BitField of the vendor consent section", bitOffset: 230,
                    found: "the end of the core segment at bit 360",
                    expected: "1283 bits, one per vendor up to MaxVendorId"
                ))
        }
    }

    func testAStringCutInsideTheHeaderNamesTheField() {
        let cut = String(PublishedTCStrings.formatExample.prefix(10))
        XCTAssertThrowsError(try TCString(cut)) { error in
            XCTAssertEqual(
                (error as? TCStringError)?.description,
                "LastUpdated at bit 42: found the end of the core segment at bit 60; expected 36 bits")
        }
    }

    func testACharacterOutsideBase64urlIsNamedWithItsPosition() {
        var characters = Array(PublishedTCStrings.formatExample)
        characters[5] = "+"  // standard base64, not base64url
        XCTAssertThrowsError(try TCString(String(characters))) { error in
            let error = error as? TCStringError
            XCTAssertEqual(error?.field, "Character 5 of the core segment")
            XCTAssertEqual(error?.bitOffset, 30)
            XCTAssertEqual(error?.found, "\"+\"")
        }
        XCTAssertThrowsError(try TCString(PublishedTCStrings.globalScopeV20 + "=")) { error in
            XCTAssertEqual((error as? TCStringError)?.field, "Character 47 of the core segment")
        }
    }

    func testAnEmptyStringOrSegmentIsRefused() {
        for text in ["", ".IDKQA4AAgAKAGQAygAAA"] {
            XCTAssertThrowsError(try TCString(text)) { error in
                XCTAssertEqual((error as? TCStringError)?.field, "Core segment")
            }
        }
    }

    func testARangeEntryPastMaxVendorIdIsRefused() throws {
        // The published range-encoded string with MaxVendorId (bits 213-228) lowered to 1000.
        var bits = TCStringBits(PublishedTCStrings.someConsentedRangeEncoded)
        bits.set(1000, width: 16, at: 213)
        XCTAssertThrowsError(try TCString(bits.text)) { error in
            let error = error as? TCStringError
            XCTAssertEqual(error?.field, "RangeEntry 5 of the vendor consent section")
            XCTAssertEqual(error?.found, "vendors 1314 to 1315")
            XCTAssertEqual(
                error?.expected, "vendor ids from 1 to 1000 (MaxVendorId), the end of a range not before its start")
        }
    }

    func testALetterPastZIsRefused() {
        // ConsentLanguage starts at bit 108: its first letter set to 30.
        var bits = TCStringBits(PublishedTCStrings.formatExample)
        bits.set(30, width: 6, at: 108)
        XCTAssertThrowsError(try TCString(bits.text)) { error in
            XCTAssertEqual(
                (error as? TCStringError)?.description,
                "ConsentLanguage at bit 108: found a letter of value 30; expected a letter from 0 (a) to 25 (z)")
        }
    }

    /// Every string made by changing one character of a published one, and random base64url text,
    /// decodes or throws a TCStringError: nothing traps.
    func testNoChangeToAPublishedStringAndNoRandomTextTraps() {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        var decoded = 0
        var refused = 0
        func attempt(_ text: String) {
            do {
                _ = try TCString(text)
                decoded += 1
            } catch {
                refused += 1
            }
        }
        for published in [PublishedTCStrings.someConsentedRangeEncoded, PublishedTCStrings.formatExample] {
            let characters = Array(published)
            for index in characters.indices {
                for replacement in ["A", "_", "g", "."] {
                    var changed = characters
                    changed[index] = Character(replacement)
                    attempt(String(changed))
                }
            }
        }
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2_000 {
            let length = Int.random(in: 0...120, using: &generator)
            attempt(String((0..<length).map { _ in alphabet.randomElement(using: &generator)! }))
        }
        XCTAssertEqual(decoded + refused, 4 * 162 + 2_000)
        XCTAssertGreaterThan(decoded, 0)
        XCTAssertGreaterThan(refused, 0)
    }
}
