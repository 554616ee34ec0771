/// TC strings published by IAB Tech Lab, as they appear in its documents and tests: real strings
/// made by real encoders, not strings made for these tests.
///
/// The expected values in the tests were read independently with PyPI's `iab-tcf` 0.2.2 decoder,
/// and, where IAB Tech Lab's own tests assert them, with those assertions.
enum PublishedTCStrings {
    /// The example of "TC String Format" in IAB Tech Lab's "Transparency and Consent String with
    /// Global Vendor & CMP List Formats" (TCF v2.2/2.3; repository
    /// InteractiveAdvertisingBureau/GDPR-Transparency-and-Consent-Framework, file
    /// `TCFv2/IAB Tech Lab - Consent string and vendor list formats v2.md`, since commit 8930740
    /// of 2 June 2025): core segment, Disclosed Vendors and Publisher TC segments. CMP 880, no
    /// purpose consented, vendors 1 to 4 as a bit field.
    static let formatExample =
        "CQSbk4AQSbk4ANwAAAENAwCgAAAAAAAAAAYgACPAAAAA.IDKQA4AAgAKAGQAygAAA.YAAAAAAAAAAA"

    /// The URL-passing example of the same document at commits 1fa3569 and 0b46481 (20 February
    /// 2025): CMP 309, every purpose 1 to 11 consented, 259 vendors up to 1283 as a bit field, ten
    /// publisher restrictions.
    static let allPurposesConsented =
        "CQNIGUAQNIGUAE1ACADEBbFgAP_gAAAAAAYgKBpV9C7dbWFF8X53aPtkOY0X19BzIsQhBhSBAyAFyBOQ8JQA02E6NASgJiACEAAAoxTBAAFEHAB"
        + "EAQCAQAAEAADsIAwEgAAIIABEgBEQAAJYAAgKCIggEAAIgAIEEgAAmBiAKdLmXUiAgIACCgCQACABAICAAgMABAAIAAIAAAAAwgAAgAJgoA"
        + "IAAAAAARAIAAAAAAAAAAAAIAAAAAAAAAAAgAAAKHQAYAAgoGMgAwABBQMVABgACCgYiADAAEFAw0AGAAIKBhIAMAAQUDLQAYAAgoGUgAwABB"
        + "QMlABgACCgZCADAAEFAw.YAAAAAAAA60A"

    /// The "TC String Format" example of the same document at the same commits: CMP 56, purposes
    /// 1, 3 and 4 consented, legitimate interest for 8 and 11, vendor consents as ranges (11-13,
    /// 24-25, 333, 903, 1314-1315).
    static let someConsentedRangeEncoded =
        "CQNIGUAQNIGUAA4ACAFRBdFgALAAAAEgAAIgKRwBYAFgAbABgAGQCmgOHgpECkYBEQA4AFAAWAEUARAAAAAA"

    /// The URL-passing example of the same document in its TCF v2.0 to v2.2 versions (for example
    /// at commit a5013f6 of 29 May 2025), core segment only: IsServiceSpecific 0 (a global-scope
    /// string, invalid since TCF v2.2), purposes 1 to 3, vendors 2, 6 and 8.
    static let globalScopeV20 = "COvFyGBOvFyGBAbAAAENAPCAAOAAAAAAAAAAAEEUACCKAAA"

    /// The string of IAB Tech Lab's iabtcf-es test "201 unable to decode valid TCF2 String"
    /// (`modules/core/test/ReportedIssues.test.ts`), which asserts version 2 and the vendors of
    /// publisher restriction purpose 1, type 1: 7, 20, 71, 122, 140, 183.
    static let publisherRestrictions =
        "CO4VGswO4VGswAfZCBDEAzCsAP_AAH_AAAigGUNf_X9fb2vj-_599_t0eY1f9_63t-wzjheMs-8NyZ-X_J4Wv2MyvB34JqQKGRgkunLBAQdt"
        + "HGncTQgBwIlViTLMY02MjzNKJrJEilsbe2dYGH9vn8XT_ZKZ70-_v__7v3___33_5Ayhr_6_r7e18f3_Pvv9ujzGr_v_W9v2GccLxln3huTPy_"
        + "5PC1-xmV4O_BNSBQyMEl05YICDto407iaEAOBEqsSZZjGmxkeZpRNZIkUtjb2zrAw_t8_i6f7JTPen39___d-___--__ICgKAOAAcAA4AFAAjg"
        + "B6AEYALcGACAW0AtoJAHAAOAAcACgARwA9ACMAFuFABALaAW0GgDgAHAAOABQAI4AegBGAC3DgAgFtALaEQBwADgAHAAoAEcAPQAjABbiQAQC"
        + "2gFtCoA4ABwADgAUACOAHoARgAtxYAIBbQC2hkAcAA4ABwAKABHAD0AIwAW40AEAtoBbQ6AOAAcAA4AFAAjgB6AEYALceACAW0AtohAHAAOAAc"
        + "ACgARwA9ACMAFuRABALaAW0SgDgAHAAOABQAI4AegBGAC3JgAgFtALaKQBwADgAHAAoAEcAPQAjABblQAQC2gFtA"

    /// The consent string of IAB Tech Lab's "Consent string and vendor list formats v1.1 Final"
    /// (same repository, the file of that name): a TCF v1 string, version 1.
    static let version1 = "BOEFEAyOEFEAyAHABDENAI4AAAB9vABAASA"
}
