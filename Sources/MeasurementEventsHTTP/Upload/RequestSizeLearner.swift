/// How many events to put in one request, learnt from the server's 413 replies.
///
/// Starts at the encoder's maximum. A 413 halves the size until a request is accepted, then
/// searches between the largest size accepted and the smallest refused, and keeps the result
/// for every later batch. After ``probeAfter`` accepted requests in a row it allows half as
/// much again as the size last refused, so a server whose limit went up is used fully again,
/// at the cost of about one refused request per probe.
struct RequestSizeLearner {
    /// Accepted requests in a row before trying a larger size again.
    static let probeAfter = 100

    let maximum: Int
    /// The largest size accepted since the last 413 below it; 0 when none.
    private(set) var largestAccepted = 0
    /// The smallest size refused with 413; `nil` when none (or after growing back past the maximum).
    private(set) var smallestRefused: Int?
    private var acceptedInARow = 0

    init(maximum: Int) {
        self.maximum = max(1, maximum)
    }

    /// The most events to send in the next request.
    var next: Int {
        guard let refused = smallestRefused else { return maximum }
        if largestAccepted == 0 { return max(1, refused / 2) }
        if refused - largestAccepted <= 1 { return largestAccepted }
        return (largestAccepted + refused) / 2
    }

    /// The server accepted a request of `count` events.
    mutating func accepted(_ count: Int) {
        guard let refused = smallestRefused else { return }
        if count < refused { largestAccepted = max(largestAccepted, count) }
        acceptedInARow += 1
        guard acceptedInARow >= Self.probeAfter else { return }
        acceptedInARow = 0
        let grown = refused + max(1, refused / 2)
        smallestRefused = grown > maximum ? nil : grown
    }

    /// The server refused a request of `count` events with 413.
    mutating func refused(_ count: Int) {
        smallestRefused = min(smallestRefused ?? count, count)
        // A size accepted before is refused now: the server's limit went down.
        if largestAccepted >= count { largestAccepted = 0 }
        acceptedInARow = 0
    }
}
