/// The ISO 4217 currency codes in use (the standard's list one, with its 2024 amendments:
/// `ZWG`, `XCG`, `SLE`, `VED`), so that a typo such as `EUX` is caught on the device rather
/// than in a revenue chart. Foundation's `Locale.Currency.isoCurrencies` needs iOS 16.
///
/// ```swift
/// ISO4217.isKnown("EUR")   // true
/// ISO4217.isKnown("eur")   // false: codes are upper case
/// ```
public enum ISO4217 {
    /// Every code this package accepts.
    public static let codes: Set<String> = Set(
        table.description.split(whereSeparator: \.isWhitespace).map(String.init))

    /// Every code, in order, four bytes apart (three letters and a space or a line's end):
    /// read-only data of the binary, read by ``isKnown(_:)``. (Looked up in a set literal, the
    /// codes cost an app 3.4 KB of code to build it.)
    private static let table: StaticString = """
        AED AFN ALL AMD ANG AOA ARS AUD AWG AZN BAM BBD BDT BGN BHD BIF BMD BND BOB BOV BRL
        BSD BTN BWP BYN BZD CAD CDF CHE CHF CHW CLF CLP CNY COP COU CRC CUC CUP CVE CZK DJF
        DKK DOP DZD EGP ERN ETB EUR FJD FKP GBP GEL GHS GIP GMD GNF GTQ GYD HKD HNL HTG HUF
        IDR ILS INR IQD IRR ISK JMD JOD JPY KES KGS KHR KMF KPW KRW KWD KYD KZT LAK LBP LKR
        LRD LSL LYD MAD MDL MGA MKD MMK MNT MOP MRU MUR MVR MWK MXN MXV MYR MZN NAD NGN NIO
        NOK NPR NZD OMR PAB PEN PGK PHP PKR PLN PYG QAR RON RSD RUB RWF SAR SBD SCR SDG SEK
        SGD SHP SLE SLL SOS SRD SSP STN SVC SYP SZL THB TJS TMT TND TOP TRY TTD TWD TZS UAH
        UGX USD USN UYI UYU UYW UZS VED VES VND VUV WST XAF XCD XCG XDR XOF XPF YER ZAR ZMW
        ZWG ZWL
        """

    /// Whether `code` is an ISO 4217 currency code in use.
    ///
    /// - Parameter code: three upper-case letters.
    /// - Returns: `true` for a known code.
    public static func isKnown(_ code: String) -> Bool {
        let letters = Array(code.utf8)
        guard letters.count == 3 else { return false }
        return table.withUTF8Buffer { table in
            stride(from: 0, to: table.count - 2, by: 4).contains { start in
                table[start] == letters[0] && table[start + 1] == letters[1] && table[start + 2] == letters[2]
            }
        }
    }
}
