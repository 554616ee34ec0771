import Foundation
import MeasurementEvents
import MeasurementEventsAggregator

/// The `IABTCF_*` values a consent platform wrote, read at one moment and checked, and what they
/// mean for the purposes of a ``TCFPurposeMapping``.
///
/// The keys and their types are IAB Tech Lab's, "Consent Management Platform API" (TCF v2.2), In-App
/// Details, "What is the CMP in-app internal structure for the defined API?" (the repository
/// InteractiveAdvertisingBureau/GDPR-Transparency-and-Consent-Framework, file
/// `TCFv2/IAB Tech Lab - CMP API v2.md`). A platform writes them one at a time, so a read may see
/// some keys of the user's new choice and some of the old one: where the pre-parsed key and the TC
/// string both hold a choice, a TCF purpose (or the vendor) counts as consented only when both
/// say so. A withdrawal shows as soon as either key has it, a grant once both have it.
struct IABTCFValues: Equatable {
    /// `IABTCF_gdprApplies`, a Number: `1` the GDPR applies, `0` it does not, unset undetermined
    /// ("default before initialization").
    static let gdprAppliesKey = "IABTCF_gdprApplies"
    /// `IABTCF_TCString`, a String: the full encoded TC string.
    static let tcStringKey = "IABTCF_TCString"
    /// `IABTCF_PurposeConsents`, a binary String: `"1"` at position N, from 0, when purpose N+1 is
    /// consented.
    static let purposeConsentsKey = "IABTCF_PurposeConsents"
    /// `IABTCF_PurposeLegitimateInterests`, a binary String: `"1"` at position N when the legitimate
    /// interest for purpose N+1 is established.
    static let purposeLegitimateInterestsKey = "IABTCF_PurposeLegitimateInterests"
    /// `IABTCF_VendorConsents`, a binary String: `"1"` at position N when vendor N+1 is consented.
    static let vendorConsentsKey = "IABTCF_VendorConsents"
    /// Where the keys are documented, for messages.
    static let keysDocument = "CMP API v2, In-App Details"

    /// Whether the GDPR applies; nil while undetermined (unset, or a value that is no 0 or 1).
    var gdprApplies: Bool?
    /// The TCF purposes consented; nil when neither `IABTCF_PurposeConsents` nor the TC string
    /// holds a valid choice (or the GDPR does not apply or is undetermined: nothing else is read).
    var purposeConsents: Set<Int>?
    /// The TCF purposes whose legitimate interest is established; nil when no key holds them.
    var purposeLegitimateInterests: Set<Int>?
    /// Whether the vendor the source was given is consented; nil when no vendor was given or no
    /// key holds a valid choice.
    var vendorConsented: Bool?
    /// What was malformed, one message each, in a fixed order.
    var problems: [String] = []

    /// Reads the keys through `object` (a `UserDefaults`'s `object(forKey:)`).
    ///
    /// - Parameters:
    ///   - object: the value stored under a key, or nil.
    ///   - vendorId: the Global Vendor List id whose consent is read, if any; an id outside 1 to
    ///     65535 is never consented.
    ///   - decode: decodes a TC string (the source keeps the last one decoded).
    init(reading object: (String) -> Any?, vendorId: Int?, decode: (String) -> Result<TCString, TCStringError>) {
        gdprApplies = readGDPRApplies(object(Self.gdprAppliesKey))
        // Whether or not the GDPR applies, the other keys say nothing more: with 0 a platform may
        // leave stale values behind, and while it is undetermined none are the user's yet.
        guard gdprApplies == true else { return }

        let tcString = readTCString(object(Self.tcStringKey), decode: decode)
        let consentBits = readBinaryString(
            object(Self.purposeConsentsKey), key: Self.purposeConsentsKey, item: "purpose", maximumLength: 24,
            ignored: "purposes come from IABTCF_TCString, or stay pending without it")
        let interestBits = readBinaryString(
            object(Self.purposeLegitimateInterestsKey), key: Self.purposeLegitimateInterestsKey, item: "purpose",
            maximumLength: 24,
            ignored: "legitimate interests come from IABTCF_TCString, or count as not established without it")
        purposeConsents = Self.both(consentBits.map(Self.ids), tcString?.purposesConsent) { $0.intersection($1) }
        purposeLegitimateInterests = Self.both(interestBits.map(Self.ids), tcString?.purposesLITransparency) {
            $0.intersection($1)
        }

        guard let vendorId else { return }
        guard (1...65_535).contains(vendorId) else {
            vendorConsented = false
            return
        }
        let vendorBits = readBinaryString(
            object(Self.vendorConsentsKey), key: Self.vendorConsentsKey, item: "vendor", maximumLength: 65_535,
            ignored: "vendor consent comes from IABTCF_TCString, or stays pending without it")
        vendorConsented = Self.both(
            vendorBits.map { vendorId <= $0.count && $0[vendorId - 1] }, tcString?.isVendorConsented(vendorId)
        ) { $0 && $1 }
    }

    /// The consent of each purpose of `mapping`.
    ///
    /// Undetermined (no `IABTCF_gdprApplies` yet): pending. The GDPR does not apply: granted, as
    /// the CMP API lets vendors proceed. It applies: a purpose with no TCF purpose is granted;
    /// otherwise pending while no key holds the user's choice, granted when every TCF purpose of
    /// its row is consented (or has an established legitimate interest the mapping accepts) and
    /// the vendor, when one was given, is consented, denied when not.
    ///
    /// - Parameters:
    ///   - mapping: the TCF purposes each purpose of ours needs.
    ///   - needsVendor: whether the vendor's consent is needed too.
    func consents(under mapping: TCFPurposeMapping, needsVendor: Bool) -> [ConsentPurpose: Consent] {
        mapping.tcfPurposes.mapValues { ids in
            guard let gdprApplies else { return .pendingHolding }
            guard gdprApplies, !ids.isEmpty else { return .granted }
            guard let purposeConsents else { return .pendingHolding }
            if needsVendor {
                guard let vendorConsented else { return .pendingHolding }
                guard vendorConsented else { return .denied }
            }
            let allGiven = ids.allSatisfy { id in
                purposeConsents.contains(id)
                    || (mapping.acceptsLegitimateInterest(for: id) && purposeLegitimateInterests?.contains(id) == true)
            }
            return allGiven ? .granted : .denied
        }
    }

    /// `IABTCF_gdprApplies` as a Bool, nil when unset or malformed (reported).
    private mutating func readGDPRApplies(_ value: Any?) -> Bool? {
        guard let value else { return nil }
        // A Number 0 or 1; Foundation on Linux hands back a Bool stored with set(_: Bool, …) as a
        // Bool, where Apple's hands back an NSNumber that reads as an Int too.
        if let bool = value as? Bool, !(value is Int) { return bool }
        if let number = value as? Int, number == 0 || number == 1 { return number == 1 }
        problems.append(
            "\(Self.gdprAppliesKey): found \(Self.describe(value)); expected the Number 1 (the GDPR applies) or 0 "
                + "(it does not) (\(Self.keysDocument)); consent stays pending until it is one of them")
        return nil
    }

    /// `IABTCF_TCString` decoded, nil when unset or invalid (reported).
    private mutating func readTCString(
        _ value: Any?, decode: (String) -> Result<TCString, TCStringError>
    ) -> TCString? {
        guard let value else { return nil }
        let ignored = "the TC string is ignored"
        guard let text = value as? String else {
            problems.append(
                "\(Self.tcStringKey): found \(Self.describe(value)); expected a String (\(Self.keysDocument)); \(ignored)"
            )
            return nil
        }
        switch decode(text) {
        case .failure(let error):
            problems.append(
                "\(Self.tcStringKey): \(error) (consent string format v2, The Core String); \(ignored)")
            return nil
        case .success(let tcString):
            guard tcString.isServiceSpecific else {
                problems.append(
                    "\(Self.tcStringKey): IsServiceSpecific at bit 138: found 0; expected 1, which every TCF v2.2 "
                        + "string has: a vendor must treat one with 0 as invalid (consent string format v2, "
                        + "The Core String); \(ignored)")
                return nil
            }
            return tcString
        }
    }

    /// A binary String key as its bits (position N for item N+1), nil when unset or malformed
    /// (reported: not a String, empty, longer than `maximumLength`, a character other than 0 and 1).
    private mutating func readBinaryString(
        _ value: Any?, key: String, item: String, maximumLength: Int, ignored: String
    ) -> [Bool]? {
        guard let value else { return nil }
        let expected =
            "a String of \"0\" and \"1\", position N for \(item) N+1, at most \(maximumLength) characters "
            + "(\(Self.keysDocument)); it is ignored: \(ignored)"
        guard let text = value as? String else {
            problems.append("\(key): found \(Self.describe(value)); expected \(expected)")
            return nil
        }
        guard !text.isEmpty else {
            problems.append("\(key): found an empty string; expected \(expected)")
            return nil
        }
        // Counted in UTF-8 bytes first, so that a huge value is refused without walking it twice.
        guard text.utf8.count <= maximumLength else {
            problems.append("\(key): found a string of \(text.count) characters; expected \(expected)")
            return nil
        }
        var bits: [Bool] = []
        bits.reserveCapacity(text.utf8.count)
        for (position, character) in text.enumerated() {
            switch character {
            case "0": bits.append(false)
            case "1": bits.append(true)
            default:
                problems.append(
                    "\(key): found \(quoted(text)), with \(quoted(String(character))) at position \(position) "
                        + "(\(item) \(position + 1)); expected \(expected)")
                return nil
            }
        }
        return bits
    }

    /// The ids whose bit is set: position N is id N+1.
    private static func ids(_ bits: [Bool]) -> Set<Int> {
        Set(bits.indices.filter { bits[$0] }.map { $0 + 1 })
    }

    /// One value from two sources: both when both hold one, either alone, or nil.
    private static func both<Value>(_ first: Value?, _ second: Value?, _ combine: (Value, Value) -> Value) -> Value? {
        guard let first else { return second }
        guard let second else { return first }
        return combine(first, second)
    }

    /// A stored value as a message shows it: a string quoted, a number as it reads, else its type.
    private static func describe(_ value: Any) -> String {
        if let text = value as? String { return "the string \(quoted(text))" }
        if value is Bool || value is Int || value is Double || value is NSNumber { return "the number \(value)" }
        if let data = value as? Data { return "data of \(data.count) bytes" }
        return "a value of type \(type(of: value))"
    }
}
