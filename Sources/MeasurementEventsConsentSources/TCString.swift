import MeasurementEvents

/// The core segment of an IAB TCF v2 Transparency and Consent string (TC string), decoded: what a
/// consent platform recorded of the user's choices, as ``IABTCFConsentSource`` reads it from
/// `IABTCF_TCString`.
///
/// Every field is read in the order and width of IAB Tech Lab's "Transparency and Consent String
/// with Global Vendor & CMP List Formats" (TCF v2.2; the repository
/// InteractiveAdvertisingBureau/GDPR-Transparency-and-Consent-Framework, file
/// `TCFv2/IAB Tech Lab - Consent string and vendor list formats v2.md`), section "The Core
/// String": big-endian fields, bits numbered from the left, base64url text (RFC 4648 §5) without
/// padding, segments joined by ".". Only the core segment, which comes first, is decoded; the
/// Disclosed Vendors and Publisher TC segments that may follow are not read. Nothing here
/// depends on a platform.
///
/// ```swift
/// let tc = try TCString("CQSbk4AQSbk4ANwAAAENAwCgAAAAAAAAAAYgACPAAAAA.IDKQA4AAgAKAGQAygAAA.YAAAAAAAAAAA")
/// tc.cmpId                        // 880
/// tc.vendorConsents.contains(2)   // true
/// ```
///
/// A string that does not decode throws a ``TCStringError`` naming the field, its bit offset,
/// what was found and what was expected. Not public API: the package's promise is the consent
/// source; this type is the tool it reads with.
package struct TCString: Sendable, Equatable {
    /// Version, 6 bits: the encoding's version, 2 for TCF v2 (anything else throws).
    package let version: Int
    /// Created, 36 bits: deciseconds since 1970-01-01 UTC. Since the December 2021 update, the
    /// same day-level value as ``lastUpdated`` ("What happened to Created and LastUpdated?").
    /// Int64: Int is 32 bits on watchOS.
    package let created: Int64
    /// LastUpdated, 36 bits: deciseconds since 1970-01-01 UTC of the last change.
    package let lastUpdated: Int64
    /// CmpId, 12 bits: the IAB-assigned id of the consent platform that last updated the string.
    package let cmpId: Int
    /// CmpVersion, 12 bits: that platform's own version number.
    package let cmpVersion: Int
    /// ConsentScreen, 6 bits: the platform's number of the screen where the user chose.
    package let consentScreen: Int
    /// ConsentLanguage, 12 bits: the two-letter ISO 639-1 code of the platform's texts, each
    /// letter 6 bits (a = 0 … z = 25), written in capitals ("EN").
    package let consentLanguage: String
    /// VendorListVersion, 12 bits: the Global Vendor List version the string was made with.
    package let vendorListVersion: Int
    /// TcfPolicyVersion, 6 bits: the TCF Policies' version (4 or more since TCF v2.2).
    package let policyVersion: Int
    /// IsServiceSpecific, 1 bit: always 1 since global scope was deprecated; a vendor that meets
    /// 0 must treat the string as invalid (``IABTCFConsentSource`` does).
    package let isServiceSpecific: Bool
    /// UseNonStandardTexts, 1 bit: the platform modified the standard stack descriptions or
    /// illustrations.
    package let useNonStandardTexts: Bool
    /// SpecialFeatureOptIns, 12 bits: the special features (1 to 12) the user opted in to.
    package let specialFeatureOptIns: Set<Int>
    /// PurposesConsent, 24 bits: the purposes (1 to 24) the user consented to; purpose 1 is the
    /// leftmost bit.
    package let purposesConsent: Set<Int>
    /// PurposesLITransparency, 24 bits: the purposes (1 to 24) whose legitimate interest was
    /// established and not objected to. TCF v2.2 requires purposes 1 and 3 to 6 to be absent.
    package let purposesLITransparency: Set<Int>
    /// PurposeOneTreatment, 1 bit: true when purpose 1 was not disclosed (a jurisdiction that does
    /// not require consent to store or access information on a device).
    package let purposeOneTreatment: Bool
    /// PublisherCC, 12 bits: the ISO 3166-1 alpha-2 country whose law the publisher follows,
    /// letters as in ``consentLanguage``.
    package let publisherCountryCode: String
    /// The Vendor Consent Section: the vendors the user consented to.
    package let vendorConsents: VendorIDs
    /// The Vendor Legitimate Interest Section: the vendors whose legitimate interest was
    /// established and not objected to.
    package let vendorLegitimateInterests: VendorIDs
    /// The Publisher Restrictions Section, in the order of the string.
    package let publisherRestrictions: [PublisherRestriction]

    /// Whether the user consented to TCF purpose `id` (1 to 24).
    ///
    /// - Parameter id: a TCF purpose id; ids outside 1 to 24 are never consented.
    /// - Returns: true when PurposesConsent has the purpose's bit set.
    package func isPurposeConsented(_ id: Int) -> Bool { purposesConsent.contains(id) }

    /// Whether the user consented to vendor `id` of the Global Vendor List.
    ///
    /// - Parameter id: a vendor id (1 to 65535).
    /// - Returns: true when the vendor consent section has the vendor.
    package func isVendorConsented(_ id: Int) -> Bool { vendorConsents.contains(id) }

    /// Decodes the core segment of `text`, the characters before its first ".".
    ///
    /// - Parameter text: a TC string as a consent platform writes it to `IABTCF_TCString`.
    /// - Throws: ``TCStringError`` naming the first field that does not decode.
    package init(_ text: String) throws(TCStringError) {
        let core = text.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        var reader = try BitReader(base64url: core)
        version = try reader.int(6, "Version")
        guard version == 2 else {
            throw TCStringError(
                field: "Version", bitOffset: 0, found: "\(version)",
                expected: "2 (a TCF v2 core segment; v1 strings are invalid since 30 September 2020)")
        }
        created = try reader.int64(36, "Created")
        lastUpdated = try reader.int64(36, "LastUpdated")
        cmpId = try reader.int(12, "CmpId")
        cmpVersion = try reader.int(12, "CmpVersion")
        consentScreen = try reader.int(6, "ConsentScreen")
        consentLanguage = try reader.letters("ConsentLanguage")
        vendorListVersion = try reader.int(12, "VendorListVersion")
        policyVersion = try reader.int(6, "TcfPolicyVersion")
        isServiceSpecific = try reader.bool("IsServiceSpecific")
        useNonStandardTexts = try reader.bool("UseNonStandardTexts")
        specialFeatureOptIns = try reader.flags(12, "SpecialFeatureOptIns")
        purposesConsent = try reader.flags(24, "PurposesConsent")
        purposesLITransparency = try reader.flags(24, "PurposesLITransparency")
        purposeOneTreatment = try reader.bool("PurposeOneTreatment")
        publisherCountryCode = try reader.letters("PublisherCC")
        vendorConsents = try reader.vendorSection("vendor consent section")
        vendorLegitimateInterests = try reader.vendorSection("vendor legitimate interest section")
        let restrictionCount = try reader.int(12, "NumPubRestrictions")
        var restrictions: [PublisherRestriction] = []
        for index in 0..<restrictionCount {
            let name = "PubRestrictionEntry \(index + 1)"
            let purposeId = try reader.int(6, "PurposeId of \(name)")
            let restrictionType = try reader.int(2, "RestrictionType of \(name)")
            let vendors = try reader.rangeEntries(of: name, maximum: nil)
            restrictions.append(
                PublisherRestriction(purposeId: purposeId, restrictionType: restrictionType, vendors: vendors))
        }
        publisherRestrictions = restrictions
    }

    /// Vendor ids of one section of the core segment (consent, legitimate interest), as sorted
    /// ranges without overlap, whichever encoding the string used.
    package struct VendorIDs: Sendable, Equatable {
        /// MaxVendorId, 16 bits: the largest vendor id the section can hold.
        package let maxVendorId: Int
        /// IsRangeEncoding, 1 bit: the section was a range section rather than a bit field.
        package let isRangeEncoding: Bool
        /// The vendors the section holds, ascending, merged where they touch.
        package let ranges: [ClosedRange<Int>]

        /// Whether the section holds vendor `id`.
        ///
        /// - Parameter id: a vendor id.
        /// - Returns: true when a range holds it.
        package func contains(_ id: Int) -> Bool {
            var low = 0
            var high = ranges.count
            while low < high {
                let middle = low + (high - low) / 2
                if ranges[middle].upperBound < id { low = middle + 1 } else { high = middle }
            }
            return low < ranges.count && ranges[low].contains(id)
        }
    }

    /// One PubRestrictionEntry: the vendors a publisher restricted for a purpose.
    package struct PublisherRestriction: Sendable, Equatable {
        /// PurposeId, 6 bits: the purpose restricted.
        package let purposeId: Int
        /// RestrictionType, 2 bits: 0 not allowed, 1 requires consent, 2 requires legitimate
        /// interest (3 is undefined and kept as it is).
        package let restrictionType: Int
        /// The vendors restricted, ascending and merged.
        package let vendors: [ClosedRange<Int>]
    }
}

/// Why a TC string does not decode: the field, where it starts, what was found and what the
/// format expects.
///
/// ```swift
/// do { _ = try TCString("BOEFEAyOEFEAyAHABDENAI4AAAB9vABAASA") } catch { print(error) }
/// // Version at bit 0: found 1; expected 2 (a TCF v2 core segment; v1 strings are invalid since …)
/// ```
package struct TCStringError: Error, Equatable, CustomStringConvertible {
    /// The field as the specification names it ("MaxVendorId of the vendor consent section").
    package let field: String
    /// Where the field starts in the core segment, in bits from its first character.
    package let bitOffset: Int
    /// What the string holds there.
    package let found: String
    /// What the format allows there.
    package let expected: String

    /// `<field> at bit <offset>: found <found>; expected <expected>`.
    package var description: String { "\(field) at bit \(bitOffset): found \(found); expected \(expected)" }
}

/// Reads the bits of a base64url text from the left, one field at a time.
private struct BitReader {
    /// The text's characters as 6-bit values.
    private let sextets: [UInt8]
    /// The next bit to read.
    private(set) var offset = 0
    private var count: Int { sextets.count * 6 }

    init(base64url text: Substring) throws(TCStringError) {
        guard !text.isEmpty else {
            throw TCStringError(
                field: "Core segment", bitOffset: 0, found: "nothing",
                expected: "base64url text (the TC string's first segment, before any \".\")")
        }
        var values: [UInt8] = []
        values.reserveCapacity(text.utf8.count)
        for (index, scalar) in text.unicodeScalars.enumerated() {
            guard let value = Self.value(of: scalar) else {
                throw TCStringError(
                    field: "Character \(index) of the core segment", bitOffset: index * 6,
                    found: quoted(String(scalar)),
                    expected: "a base64url character (A-Z, a-z, 0-9, \"-\", \"_\"; no padding)")
            }
            values.append(value)
        }
        sextets = values
    }

    /// The value of a base64url digit (RFC 4648 §5), or nil.
    private static func value(of scalar: Unicode.Scalar) -> UInt8? {
        switch scalar.value {
        case 0x41...0x5A: return UInt8(truncatingIfNeeded: scalar.value - 0x41)  // A-Z: 0-25
        case 0x61...0x7A: return UInt8(truncatingIfNeeded: scalar.value - 0x61 + 26)  // a-z: 26-51
        case 0x30...0x39: return UInt8(truncatingIfNeeded: scalar.value - 0x30 + 52)  // 0-9: 52-61
        case 0x2D: return 62  // -
        case 0x5F: return 63  // _
        default: return nil
        }
    }

    /// The next `width` bits (at most 64) as an unsigned number.
    mutating func bits(_ width: Int, _ field: @autoclosure () -> String) throws(TCStringError) -> UInt64 {
        guard width <= count - offset else {
            throw TCStringError(
                field: field(), bitOffset: offset, found: "the end of the core segment at bit \(count)",
                expected: "\(width) bit\(width == 1 ? "" : "s")")
        }
        var value: UInt64 = 0
        for bit in offset..<(offset + width) {
            value = value << 1 | UInt64((sextets[bit / 6] >> (5 - bit % 6)) & 1)
        }
        offset += width
        return value
    }

    /// A field of at most 16 bits, which fits an Int on every platform.
    mutating func int(_ width: Int, _ field: @autoclosure () -> String) throws(TCStringError) -> Int {
        Int(truncatingIfNeeded: try bits(width, field()))
    }

    /// A field of more than 16 bits (the 36-bit timestamps), as Int64: Int is 32 bits on watchOS.
    mutating func int64(_ width: Int, _ field: @autoclosure () -> String) throws(TCStringError) -> Int64 {
        Int64(truncatingIfNeeded: try bits(width, field()))
    }

    mutating func bool(_ field: @autoclosure () -> String) throws(TCStringError) -> Bool {
        try bits(1, field()) == 1
    }

    /// `width` flags, the leftmost for id 1: the ids whose bit is set.
    mutating func flags(_ width: Int, _ field: @autoclosure () -> String) throws(TCStringError) -> Set<Int> {
        let value = try bits(width, field())
        return Set((1...width).filter { value >> UInt64(width - $0) & 1 == 1 })
    }

    /// Two letters of 6 bits each, a = 0 … z = 25, in capitals.
    mutating func letters(_ field: String) throws(TCStringError) -> String {
        var result = ""
        for _ in 0..<2 {
            let start = offset
            let value = try bits(6, field)
            guard value < 26 else {
                throw TCStringError(
                    field: field, bitOffset: start, found: "a letter of value \(value)",
                    expected: "a letter from 0 (a) to 25 (z)")
            }
            result.unicodeScalars.append(Unicode.Scalar(UInt8(truncatingIfNeeded: 0x41 + value)))
        }
        return result
    }

    /// A vendor section: MaxVendorId, IsRangeEncoding, then a bit field or range entries.
    mutating func vendorSection(_ section: String) throws(TCStringError) -> TCString.VendorIDs {
        let maxVendorId = try int(16, "MaxVendorId of the \(section)")
        let isRangeEncoding = try bool("IsRangeEncoding of the \(section)")
        if isRangeEncoding {
            let ranges = try rangeEntries(of: "the \(section)", maximum: maxVendorId)
            return TCString.VendorIDs(maxVendorId: maxVendorId, isRangeEncoding: true, ranges: ranges)
        }
        guard maxVendorId <= count - offset else {
            throw TCStringError(
                field: "BitField of the \(section)", bitOffset: offset,
                found: "the end of the core segment at bit \(count)",
                expected: "\(maxVendorId) bits, one per vendor up to MaxVendorId")
        }
        var ranges: [ClosedRange<Int>] = []
        var runStart: Int?
        for id in stride(from: 1, through: maxVendorId, by: 1) {
            let isSet = try bits(1, "BitField of the \(section)") == 1
            if isSet, runStart == nil { runStart = id }
            if !isSet, let start = runStart {
                ranges.append(start...(id - 1))
                runStart = nil
            }
        }
        if let start = runStart { ranges.append(start...maxVendorId) }
        return TCString.VendorIDs(maxVendorId: maxVendorId, isRangeEncoding: false, ranges: ranges)
    }

    /// NumEntries, then that many RangeEntry (IsARange, StartOrOnlyVendorId, EndVendorId when a
    /// range), as sorted ranges merged where they touch. Ids start at 1, and at `maximum` when
    /// given (MaxVendorId of a vendor section).
    mutating func rangeEntries(of owner: String, maximum: Int?) throws(TCStringError) -> [ClosedRange<Int>] {
        let entryCount = try int(12, "NumEntries of \(owner)")
        var ranges: [ClosedRange<Int>] = []
        ranges.reserveCapacity(entryCount)
        for index in 0..<entryCount {
            let entry = "RangeEntry \(index + 1) of \(owner)"
            let start = offset
            let isARange = try bool("IsARange of \(entry)")
            let first = try int(16, "StartOrOnlyVendorId of \(entry)")
            let last = isARange ? try int(16, "EndVendorId of \(entry)") : first
            let limit = maximum.map { "\($0) (MaxVendorId)" } ?? "65535"
            guard first >= 1, last >= first, last <= (maximum ?? 65_535) else {
                throw TCStringError(
                    field: entry, bitOffset: start, found: isARange ? "vendors \(first) to \(last)" : "vendor \(first)",
                    expected: "vendor ids from 1 to \(limit), the end of a range not before its start")
            }
            ranges.append(first...last)
        }
        ranges.sort { $0.lowerBound < $1.lowerBound }
        var merged: [ClosedRange<Int>] = []
        for range in ranges {
            if let last = merged.last, range.lowerBound <= last.upperBound + 1 {
                merged[merged.count - 1] = last.lowerBound...max(last.upperBound, range.upperBound)
            } else {
                merged.append(range)
            }
        }
        return merged
    }
}
