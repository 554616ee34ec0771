/// Turns a batch of impressions into what an ``ImpressionTrackingService`` sends: events,
/// a JSON body, a vendor's objects.
///
/// ```swift
/// struct JSONImpressionEncoder: ImpressionEncoder {
///     func encode(_ batch: [Impression<String>], clock: any ImpressionClock) throws -> Data {
///         try JSONEncoder().encode(batch.map { ["id": $0.itemID, "ms": "\(Int64($0.visibleDuration * 1000))"] })
///     }
/// }
/// ```
public protocol ImpressionEncoder: Sendable {
    /// The engine's item id type.
    associatedtype ItemID: Hashable & Sendable
    /// What the encoder makes of a batch, and the service sends.
    associatedtype Payload: Sendable

    /// Encodes one batch. Throwing drops the batch; the engine counts and reports it.
    ///
    /// - Parameters:
    ///   - batch: at most ``ImpressionConfiguration/batchSize`` impressions, in commit order.
    ///   - clock: the engine's clock, to turn instants into dates.
    /// - Returns: the payload for ``ImpressionTrackingService/send(_:)``.
    /// - Throws: any error; the batch is dropped and reported as
    ///   ``ImpressionProblem/encodingFailed(impressions:error:)``.
    func encode(_ batch: [Impression<ItemID>], clock: any ImpressionClock) throws -> Payload
}

/// Where pushed impressions go: the one requirement is sending one encoded batch.
///
/// `send` is called on the thread that pushes (the cycle's queue, or the caller of
/// ``ImpressionEngine/push()``); a network service should hand the payload to its own upload
/// queue rather than wait for the response.
///
/// ```swift
/// struct UploadService: ImpressionTrackingService {
///     let uploader: Uploader
///     func send(_ payload: Data) throws { try uploader.enqueue(payload) }
/// }
/// ```
public protocol ImpressionTrackingService: Sendable {
    /// What the service sends: the encoder's output.
    associatedtype Payload: Sendable

    /// Sends one batch. Throwing puts the batch (and the rest of this push) back in the store
    /// for the next push; the engine counts and reports it.
    ///
    /// - Parameter payload: one encoded batch.
    /// - Throws: any error; the batch is kept and reported as
    ///   ``ImpressionProblem/sendFailed(impressions:error:)``.
    func send(_ payload: Payload) throws
}
