import MeasurementEventsAggregator

/// Which IAB TCF v2.2 purposes each of the app's `ConsentPurpose`s
/// needs: ``IABTCFConsentSource`` grants a purpose of ours only when the user consented to every
/// TCF purpose of its row.
///
/// The TCF numbers its purposes 1 to 11 today (IAB Europe's TCF Policies v2.2; the names as the
/// Global Vendor List version 3 publishes them):
///
/// | TCF | Purpose |
/// | --- | --- |
/// | 1 | Store and/or access information on a device |
/// | 2 | Use limited data to select advertising |
/// | 3 | Create profiles for personalised advertising |
/// | 4 | Use profiles to select personalised advertising |
/// | 5 | Create profiles to personalise content |
/// | 6 | Use profiles to select personalised content |
/// | 7 | Measure advertising performance |
/// | 8 | Measure content performance |
/// | 9 | Understand audiences through statistics or combinations of data from different sources |
/// | 10 | Develop and improve services |
/// | 11 | Use limited data to select content |
///
/// ``standard`` is the table below; each row is justified in the article
/// <doc:ConsentFromAConsentPlatform>. An app replaces a row, adds its own purposes, or starts
/// from an empty mapping:
///
/// ```swift
/// var mapping = TCFPurposeMapping.standard
/// mapping[.personalization] = [1, 5, 6]           // content only: this app shows no ads
/// mapping[ConsentPurpose(rawValue: "crashReports")] = [1, 10]
/// let source = IABTCFConsentSource(mapping: mapping)
/// ```
///
/// By default only consent counts. ``legitimateInterestPurposes`` names the TCF purposes for
/// which an established legitimate interest (`IABTCF_PurposeLegitimateInterests`, the TC string's
/// PurposesLITransparency) counts as well; TCF v2.2 never allows it for purposes 1 and 3 to 6.
public struct TCFPurposeMapping: Sendable, Equatable {
    /// The TCF purposes (1 to 24) each purpose of ours needs. A purpose with an empty set needs
    /// no TCF purpose: it is granted wherever the platform has decided whether the GDPR applies.
    public var tcfPurposes: [ConsentPurpose: Set<Int>]

    /// The TCF purposes for which an established legitimate interest counts as consent; none by
    /// default. Purposes 1 and 3 to 6 are ignored here (reported by the source): TCF v2.2 does not
    /// allow legitimate interest for them.
    public var legitimateInterestPurposes: Set<Int>

    /// A mapping of `tcfPurposes`.
    ///
    /// ```swift
    /// let mapping = TCFPurposeMapping([.analytics: [1, 8, 10]], legitimateInterestPurposes: [8, 10])
    /// ```
    ///
    /// - Parameters:
    ///   - tcfPurposes: the TCF purposes each purpose of ours needs.
    ///   - legitimateInterestPurposes: the TCF purposes for which an established legitimate
    ///     interest counts as consent.
    public init(_ tcfPurposes: [ConsentPurpose: Set<Int>], legitimateInterestPurposes: Set<Int> = []) {
        self.tcfPurposes = tcfPurposes
        self.legitimateInterestPurposes = legitimateInterestPurposes
    }

    /// The TCF purposes `purpose` needs, or nil when the mapping does not name it (the source
    /// then says nothing about it).
    ///
    /// ```swift
    /// TCFPurposeMapping.standard[.analytics]   // [1, 8, 9, 10]
    /// ```
    ///
    /// - Parameter purpose: a purpose of ours.
    public subscript(purpose: ConsentPurpose) -> Set<Int>? {
        get { tcfPurposes[purpose] }
        set { tcfPurposes[purpose] = newValue }
    }

    /// The package's table, consent only:
    ///
    /// | Ours | TCF purposes |
    /// | --- | --- |
    /// | analytics | 1, 8, 9, 10 |
    /// | advertising | 1, 2, 7 |
    /// | personalization | 1, 3, 4, 5, 6 |
    /// | functional | none |
    ///
    /// Every purpose that stores or reads an identifier on the device needs purpose 1. Analytics
    /// measures how the app's content is used (8), makes statistics of its audience (9) and
    /// improves the app (10); measuring ads (7) belongs to advertising. Advertising selects ads
    /// from limited data (2) and measures them (7). Personalization builds and uses profiles,
    /// for ads (3, 4) and for content (5, 6). Functional stands for TCF's special purposes
    /// (security, fraud, fixing errors; delivering content), which the TCF discloses without
    /// asking consent.
    public static let standard = TCFPurposeMapping([
        .analytics: [1, 8, 9, 10],
        .advertising: [1, 2, 7],
        .personalization: [1, 3, 4, 5, 6],
        .functional: [],
    ])

    /// The TCF purposes a legitimate interest may establish under TCF v2.2: 2 and 7 to 24 (1 is
    /// always consent; legitimate interest for 3 to 6 was removed in v2.2).
    static let purposesAllowingLegitimateInterest: Set<Int> = Set([2] + Array(7...24))

    /// What is wrong with the mapping: TCF purposes outside 1 to 24, legitimate interest where
    /// TCF v2.2 does not allow it. Sorted, so that each is reported once and in the same words.
    var problems: [String] {
        var problems: [String] = []
        for (purpose, ids) in tcfPurposes {
            for id in ids.sorted() where !(1...24).contains(id) {
                problems.append(
                    "TCFPurposeMapping: \(purpose) needs TCF purpose \(id), but TCF purposes are 1 to 24 (the 24 bits "
                        + "of PurposesConsent); \(purpose) is denied wherever the GDPR applies")
            }
        }
        for id in legitimateInterestPurposes.sorted() where !Self.purposesAllowingLegitimateInterest.contains(id) {
            problems.append(
                "TCFPurposeMapping: legitimate interest cannot stand for TCF purpose \(id): TCF v2.2 does not "
                    + "allow it for purposes 1 and 3 to 6, nor does a TC string hold purposes past 24 (consent string "
                    + "format v2, PurposesLITransparency); only consent counts for \(id)")
        }
        return problems.sorted()
    }

    /// Whether a legitimate interest established for TCF purpose `id` counts as its consent.
    func acceptsLegitimateInterest(for id: Int) -> Bool {
        legitimateInterestPurposes.contains(id) && Self.purposesAllowingLegitimateInterest.contains(id)
    }
}
