import MeasurementEventsAggregator
import XCTest

@testable import MeasurementEventsConsentSources

/// Reading the IABTCF_* keys at one moment, and what they mean for each purpose of a mapping.
final class IABTCFValuesTests: XCTestCase {
    private func read(_ stored: [String: Any], vendorId: Int? = nil) -> IABTCFValues {
        IABTCFValues(
            reading: { stored[$0] }, vendorId: vendorId,
            decode: { text in Result { () throws(TCStringError) -> TCString in try TCString(text) } })
    }

    private func consents(
        _ stored: [String: Any], mapping: TCFPurposeMapping = .standard, vendorId: Int? = nil
    ) -> [ConsentPurpose: Consent] {
        read(stored, vendorId: vendorId).consents(under: mapping, needsVendor: vendorId != nil)
    }

    func testUndeterminedGDPRKeepsEveryPurposePendingAndReadsNothingElse() {
        let values = read(["IABTCF_PurposeConsents": "01x1", "IABTCF_TCString": "%"])
        XCTAssertNil(values.gdprApplies)
        XCTAssertEqual(values.problems, [])
        XCTAssertEqual(
            consents([:]),
            [
                .analytics: .pendingHolding, .advertising: .pendingHolding, .personalization: .pendingHolding,
                .functional: .pendingHolding,
            ])
    }

    func testGDPRNotApplyingGrantsEveryPurposeWhateverTheOtherKeysSay() {
        let stored: [String: Any] = ["IABTCF_gdprApplies": 0, "IABTCF_PurposeConsents": "0000000000"]
        XCTAssertEqual(
            consents(stored),
            [.analytics: .granted, .advertising: .granted, .personalization: .granted, .functional: .granted])
        XCTAssertEqual(read(stored).problems, [])
        XCTAssertEqual(read(["IABTCF_gdprApplies": false]).gdprApplies, false)
        XCTAssertEqual(read(["IABTCF_gdprApplies": true]).gdprApplies, true)
    }

    func testGDPRApplyingWithoutAChoiceYetIsPendingExceptPurposesWithoutTCFPurposes() {
        XCTAssertEqual(
            consents(["IABTCF_gdprApplies": 1]),
            [
                .analytics: .pendingHolding, .advertising: .pendingHolding, .personalization: .pendingHolding,
                .functional: .granted,
            ])
    }

    func testAGDPRAppliesValueOtherThanZeroOrOneIsReportedAndPending() {
        for value: Any in [2, "1", -1] {
            let values = read(["IABTCF_gdprApplies": value])
            XCTAssertNil(values.gdprApplies)
            XCTAssertEqual(values.problems.count, 1)
            XCTAssertTrue(values.problems[0].hasPrefix("IABTCF_gdprApplies: found "), values.problems[0])
        }
        XCTAssertEqual(
            read(["IABTCF_gdprApplies": "1"]).problems,
            [
                "IABTCF_gdprApplies: found the string \"1\"; expected the Number 1 (the GDPR applies) or 0 (it does "
                    + "not) (CMP API v2, In-App Details); consent stays pending until it is one of them"
            ])
    }

    func testThePurposeConsentsKeyDecidesEachRow() {
        // Purposes 1, 2, 7, 8, 9, 10 consented: analytics and advertising, not personalization.
        XCTAssertEqual(
            consents(["IABTCF_gdprApplies": 1, "IABTCF_PurposeConsents": "11000011110"]),
            [.analytics: .granted, .advertising: .granted, .personalization: .denied, .functional: .granted])
        // A string shorter than a purpose's position does not consent to it.
        XCTAssertEqual(consents(["IABTCF_gdprApplies": 1, "IABTCF_PurposeConsents": "11"])[.advertising], .denied)
    }

    func testTheTCStringAloneDecidesWhenThePurposeKeyIsMissing() {
        XCTAssertEqual(
            consents(["IABTCF_gdprApplies": 1, "IABTCF_TCString": PublishedTCStrings.allPurposesConsented]),
            [.analytics: .granted, .advertising: .granted, .personalization: .granted, .functional: .granted])
        XCTAssertEqual(
            consents(["IABTCF_gdprApplies": 1, "IABTCF_TCString": PublishedTCStrings.someConsentedRangeEncoded]),
            [.analytics: .denied, .advertising: .denied, .personalization: .denied, .functional: .granted])
    }

    /// A platform writes one key at a time: while the TC string says yes and the purpose key
    /// still says no (or the reverse), the purpose is not granted.
    func testAPurposeCountsOnlyWhenTheKeyAndTheTCStringBothConsent() {
        let values = read([
            "IABTCF_gdprApplies": 1, "IABTCF_TCString": PublishedTCStrings.allPurposesConsented,
            "IABTCF_PurposeConsents": "10000000111",
        ])
        XCTAssertEqual(values.purposeConsents, [1, 9, 10, 11])
        XCTAssertEqual(values.consents(under: .standard, needsVendor: false)[.analytics], .denied)
    }

    func testMalformedPurposeConsentsAreReportedAndIgnored() {
        let tooLong = String(repeating: "1", count: 10_000)
        let cases: [(String, String)] = [
            ("01x1", "found \"01x1\", with \"x\" at position 2 (purpose 3)"),
            ("", "found an empty string"),
            (tooLong, "found a string of 10000 characters"),
            ("1é1", "found \"1é1\", with \"é\" at position 1 (purpose 2)"),
        ]
        for (stored, found) in cases {
            let values = read(["IABTCF_gdprApplies": 1, "IABTCF_PurposeConsents": stored])
            XCTAssertNil(values.purposeConsents)
            XCTAssertEqual(
                values.problems,
                [
                    "IABTCF_PurposeConsents: \(found); expected a String of \"0\" and \"1\", position N for purpose N+1, "
                        + "at most 24 characters (CMP API v2, In-App Details); it is ignored: purposes come from "
                        + "IABTCF_TCString, or stay pending without it"
                ])
            XCTAssertEqual(values.consents(under: .standard, needsVendor: false)[.analytics], .pendingHolding)
        }
        // Beside a valid TC string, the string decides alone.
        XCTAssertEqual(
            consents([
                "IABTCF_gdprApplies": 1, "IABTCF_PurposeConsents": "01x1",
                "IABTCF_TCString": PublishedTCStrings.allPurposesConsented,
            ])[.analytics], .granted)
    }

    func testAPurposeKeyThatIsNoStringIsReported() {
        let values = read(["IABTCF_gdprApplies": 1, "IABTCF_PurposeConsents": 1011])
        XCTAssertEqual(values.problems.count, 1)
        XCTAssertTrue(values.problems[0].hasPrefix("IABTCF_PurposeConsents: found the number 1011; expected a String"))
    }

    func testAnInvalidTCStringIsReportedAndIgnored() {
        let values = read(["IABTCF_gdprApplies": 1, "IABTCF_TCString": PublishedTCStrings.version1])
        XCTAssertNil(values.purposeConsents)
        XCTAssertEqual(
            values.problems,
            [
                "IABTCF_TCString: Version at bit 0: found 1; expected 2 (a TCF v2 core segment; v1 strings are invalid "
                    + "since 30 September 2020) (consent string format v2, The Core String); the TC string is ignored"
            ])
    }

    func testAGlobalScopeTCStringIsIgnoredAsTheFormatRequires() {
        let values = read(["IABTCF_gdprApplies": 1, "IABTCF_TCString": PublishedTCStrings.globalScopeV20])
        XCTAssertNil(values.purposeConsents)
        XCTAssertEqual(values.problems.count, 1)
        XCTAssertTrue(
            values.problems[0].hasPrefix("IABTCF_TCString: IsServiceSpecific at bit 138: found 0; expected 1"))
    }

    func testLegitimateInterestCountsOnlyForThePurposesTheMappingAccepts() {
        // The range-encoded string: purposes 1, 3, 4 consented; legitimate interest for 8 and 11.
        let stored: [String: Any] = [
            "IABTCF_gdprApplies": 1, "IABTCF_TCString": PublishedTCStrings.someConsentedRangeEncoded,
        ]
        let consentOnly = TCFPurposeMapping([.analytics: [1, 8]])
        XCTAssertEqual(consents(stored, mapping: consentOnly), [.analytics: .denied])
        let withInterest = TCFPurposeMapping([.analytics: [1, 8]], legitimateInterestPurposes: [8])
        XCTAssertEqual(consents(stored, mapping: withInterest), [.analytics: .granted])
        // The pre-parsed key withdraws it: both sources must establish it.
        var withdrawn = stored
        withdrawn["IABTCF_PurposeLegitimateInterests"] = "00000000001"
        XCTAssertEqual(consents(withdrawn, mapping: withInterest), [.analytics: .denied])
    }

    func testTheNamedVendorsConsentIsNeededToo() {
        let stored: [String: Any] = [
            "IABTCF_gdprApplies": 1, "IABTCF_TCString": PublishedTCStrings.allPurposesConsented,
        ]
        XCTAssertEqual(consents(stored, vendorId: 4)[.analytics], .granted)
        XCTAssertEqual(consents(stored, vendorId: 2)[.analytics], .denied)
        XCTAssertEqual(consents(stored, vendorId: 2)[.functional], .granted)
        XCTAssertEqual(consents(stored, vendorId: 0)[.analytics], .denied)
        // The pre-parsed key: position N for vendor N+1.
        let keysOnly: [String: Any] = [
            "IABTCF_gdprApplies": 1, "IABTCF_PurposeConsents": "11111111111", "IABTCF_VendorConsents": "0001",
        ]
        XCTAssertEqual(consents(keysOnly, vendorId: 4)[.analytics], .granted)
        XCTAssertEqual(consents(keysOnly, vendorId: 3)[.analytics], .denied)
        XCTAssertEqual(consents(keysOnly, vendorId: 5)[.analytics], .denied)
        // No vendor key nor TC string: pending.
        XCTAssertEqual(
            consents(["IABTCF_gdprApplies": 1, "IABTCF_PurposeConsents": "11111111111"], vendorId: 4)[.analytics],
            .pendingHolding)
    }
}
