/// One entry point per trigger, each for one or more objects, or an array of them:
///
/// ```swift
/// detector.reportDidAppear(self)                                // a view controller
/// detector.reportDidAppear(collectionView.visibleCells)         // cells
/// detector.reportDidEndTouch(button, synchronously: true)       // run before returning
/// ```
///
/// Each returns whether any event fired.
extension TriggerDetector {
    /// Reports that `objects` appeared: runs their ``Trigger/didAppear`` events.
    ///
    /// Typical source: a screen's `viewDidAppear`, a cell's `willDisplay`.
    ///
    /// This form takes one or more objects; every object's events fire, in argument order.
    ///
    /// - Parameters:
    ///   - objects: the objects the UI layer saw this happen to; objects without events are skipped.
    ///   - synchronously: run the actions before returning (after any action queued earlier),
    ///     instead of on the detector's queue.
    /// - Returns: whether any event fired.
    @discardableResult
    public func reportDidAppear(_ objects: AnyObject..., synchronously: Bool = false) -> Bool {
        report(.didAppear, for: objects, synchronously: synchronously)
    }

    /// Reports that `objects` appeared: runs their ``Trigger/didAppear`` events.
    ///
    /// Typical source: a screen's `viewDidAppear`, a cell's `willDisplay`.
    ///
    /// This form takes an array of objects (visible cells, say); every object's events fire, in argument order.
    ///
    /// - Parameters:
    ///   - objects: the objects the UI layer saw this happen to; objects without events are skipped.
    ///   - synchronously: run the actions before returning (after any action queued earlier),
    ///     instead of on the detector's queue.
    /// - Returns: whether any event fired.
    @discardableResult
    public func reportDidAppear(_ objects: [AnyObject], synchronously: Bool = false) -> Bool {
        report(.didAppear, for: objects, synchronously: synchronously)
    }

    /// Reports that `objects` stopped being displayed: runs their ``Trigger/didDisappear`` events.
    ///
    /// Typical source: a screen's `viewDidDisappear`, a cell's `didEndDisplaying`.
    ///
    /// This form takes one or more objects; every object's events fire, in argument order.
    ///
    /// - Parameters:
    ///   - objects: the objects the UI layer saw this happen to; objects without events are skipped.
    ///   - synchronously: run the actions before returning (after any action queued earlier),
    ///     instead of on the detector's queue.
    /// - Returns: whether any event fired.
    @discardableResult
    public func reportDidDisappear(_ objects: AnyObject..., synchronously: Bool = false) -> Bool {
        report(.didDisappear, for: objects, synchronously: synchronously)
    }

    /// Reports that `objects` stopped being displayed: runs their ``Trigger/didDisappear`` events.
    ///
    /// Typical source: a screen's `viewDidDisappear`, a cell's `didEndDisplaying`.
    ///
    /// This form takes an array of objects (visible cells, say); every object's events fire, in argument order.
    ///
    /// - Parameters:
    ///   - objects: the objects the UI layer saw this happen to; objects without events are skipped.
    ///   - synchronously: run the actions before returning (after any action queued earlier),
    ///     instead of on the detector's queue.
    /// - Returns: whether any event fired.
    @discardableResult
    public func reportDidDisappear(_ objects: [AnyObject], synchronously: Bool = false) -> Bool {
        report(.didDisappear, for: objects, synchronously: synchronously)
    }

    /// Reports that `objects` were tapped: runs their ``Trigger/didEndTouch`` events.
    ///
    /// Typical source: `touchesEnded`, a tap gesture.
    ///
    /// This form takes one or more objects; every object's events fire, in argument order.
    ///
    /// - Parameters:
    ///   - objects: the objects the UI layer saw this happen to; objects without events are skipped.
    ///   - synchronously: run the actions before returning (after any action queued earlier),
    ///     instead of on the detector's queue.
    /// - Returns: whether any event fired.
    @discardableResult
    public func reportDidEndTouch(_ objects: AnyObject..., synchronously: Bool = false) -> Bool {
        report(.didEndTouch, for: objects, synchronously: synchronously)
    }

    /// Reports that `objects` were tapped: runs their ``Trigger/didEndTouch`` events.
    ///
    /// Typical source: `touchesEnded`, a tap gesture.
    ///
    /// This form takes an array of objects (visible cells, say); every object's events fire, in argument order.
    ///
    /// - Parameters:
    ///   - objects: the objects the UI layer saw this happen to; objects without events are skipped.
    ///   - synchronously: run the actions before returning (after any action queued earlier),
    ///     instead of on the detector's queue.
    /// - Returns: whether any event fired.
    @discardableResult
    public func reportDidEndTouch(_ objects: [AnyObject], synchronously: Bool = false) -> Bool {
        report(.didEndTouch, for: objects, synchronously: synchronously)
    }

    /// Reports that `objects` began scrolling: runs their ``Trigger/didBeginScroll`` events.
    ///
    /// Typical source: `scrollViewWillBeginDragging`.
    ///
    /// This form takes one or more objects; every object's events fire, in argument order.
    ///
    /// - Parameters:
    ///   - objects: the objects the UI layer saw this happen to; objects without events are skipped.
    ///   - synchronously: run the actions before returning (after any action queued earlier),
    ///     instead of on the detector's queue.
    /// - Returns: whether any event fired.
    @discardableResult
    public func reportDidBeginScroll(_ objects: AnyObject..., synchronously: Bool = false) -> Bool {
        report(.didBeginScroll, for: objects, synchronously: synchronously)
    }

    /// Reports that `objects` began scrolling: runs their ``Trigger/didBeginScroll`` events.
    ///
    /// Typical source: `scrollViewWillBeginDragging`.
    ///
    /// This form takes an array of objects (visible cells, say); every object's events fire, in argument order.
    ///
    /// - Parameters:
    ///   - objects: the objects the UI layer saw this happen to; objects without events are skipped.
    ///   - synchronously: run the actions before returning (after any action queued earlier),
    ///     instead of on the detector's queue.
    /// - Returns: whether any event fired.
    @discardableResult
    public func reportDidBeginScroll(_ objects: [AnyObject], synchronously: Bool = false) -> Bool {
        report(.didBeginScroll, for: objects, synchronously: synchronously)
    }

    /// Reports that `objects` became first responder: runs their ``Trigger/didBecomeFirstResponder`` events.
    ///
    /// Typical source: a text field got the keyboard.
    ///
    /// This form takes one or more objects; every object's events fire, in argument order.
    ///
    /// - Parameters:
    ///   - objects: the objects the UI layer saw this happen to; objects without events are skipped.
    ///   - synchronously: run the actions before returning (after any action queued earlier),
    ///     instead of on the detector's queue.
    /// - Returns: whether any event fired.
    @discardableResult
    public func reportDidBecomeFirstResponder(_ objects: AnyObject..., synchronously: Bool = false) -> Bool {
        report(.didBecomeFirstResponder, for: objects, synchronously: synchronously)
    }

    /// Reports that `objects` became first responder: runs their ``Trigger/didBecomeFirstResponder`` events.
    ///
    /// Typical source: a text field got the keyboard.
    ///
    /// This form takes an array of objects (visible cells, say); every object's events fire, in argument order.
    ///
    /// - Parameters:
    ///   - objects: the objects the UI layer saw this happen to; objects without events are skipped.
    ///   - synchronously: run the actions before returning (after any action queued earlier),
    ///     instead of on the detector's queue.
    /// - Returns: whether any event fired.
    @discardableResult
    public func reportDidBecomeFirstResponder(_ objects: [AnyObject], synchronously: Bool = false) -> Bool {
        report(.didBecomeFirstResponder, for: objects, synchronously: synchronously)
    }

    /// Reports that `objects` resigned first responder: runs their ``Trigger/didResignFirstResponder`` events.
    ///
    /// Typical source: a text field lost the keyboard.
    ///
    /// This form takes one or more objects; every object's events fire, in argument order.
    ///
    /// - Parameters:
    ///   - objects: the objects the UI layer saw this happen to; objects without events are skipped.
    ///   - synchronously: run the actions before returning (after any action queued earlier),
    ///     instead of on the detector's queue.
    /// - Returns: whether any event fired.
    @discardableResult
    public func reportDidResignFirstResponder(_ objects: AnyObject..., synchronously: Bool = false) -> Bool {
        report(.didResignFirstResponder, for: objects, synchronously: synchronously)
    }

    /// Reports that `objects` resigned first responder: runs their ``Trigger/didResignFirstResponder`` events.
    ///
    /// Typical source: a text field lost the keyboard.
    ///
    /// This form takes an array of objects (visible cells, say); every object's events fire, in argument order.
    ///
    /// - Parameters:
    ///   - objects: the objects the UI layer saw this happen to; objects without events are skipped.
    ///   - synchronously: run the actions before returning (after any action queued earlier),
    ///     instead of on the detector's queue.
    /// - Returns: whether any event fired.
    @discardableResult
    public func reportDidResignFirstResponder(_ objects: [AnyObject], synchronously: Bool = false) -> Bool {
        report(.didResignFirstResponder, for: objects, synchronously: synchronously)
    }

    /// Reports that `objects` sent their target-action message: runs their ``Trigger/targetAction`` events.
    ///
    /// Typical source: a control's action.
    ///
    /// This form takes one or more objects; every object's events fire, in argument order.
    ///
    /// - Parameters:
    ///   - objects: the objects the UI layer saw this happen to; objects without events are skipped.
    ///   - synchronously: run the actions before returning (after any action queued earlier),
    ///     instead of on the detector's queue.
    /// - Returns: whether any event fired.
    @discardableResult
    public func reportTargetAction(_ objects: AnyObject..., synchronously: Bool = false) -> Bool {
        report(.targetAction, for: objects, synchronously: synchronously)
    }

    /// Reports that `objects` sent their target-action message: runs their ``Trigger/targetAction`` events.
    ///
    /// Typical source: a control's action.
    ///
    /// This form takes an array of objects (visible cells, say); every object's events fire, in argument order.
    ///
    /// - Parameters:
    ///   - objects: the objects the UI layer saw this happen to; objects without events are skipped.
    ///   - synchronously: run the actions before returning (after any action queued earlier),
    ///     instead of on the detector's queue.
    /// - Returns: whether any event fired.
    @discardableResult
    public func reportTargetAction(_ objects: [AnyObject], synchronously: Bool = false) -> Bool {
        report(.targetAction, for: objects, synchronously: synchronously)
    }
}
