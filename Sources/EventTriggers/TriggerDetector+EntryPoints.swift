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
    @discardableResult
    public func reportDidAppear(_ objects: AnyObject..., synchronously: Bool = false) -> Bool {
        report(.didAppear, for: objects, synchronously: synchronously)
    }

    @discardableResult
    public func reportDidAppear(_ objects: [AnyObject], synchronously: Bool = false) -> Bool {
        report(.didAppear, for: objects, synchronously: synchronously)
    }

    @discardableResult
    public func reportDidDisappear(_ objects: AnyObject..., synchronously: Bool = false) -> Bool {
        report(.didDisappear, for: objects, synchronously: synchronously)
    }

    @discardableResult
    public func reportDidDisappear(_ objects: [AnyObject], synchronously: Bool = false) -> Bool {
        report(.didDisappear, for: objects, synchronously: synchronously)
    }

    @discardableResult
    public func reportDidEndTouch(_ objects: AnyObject..., synchronously: Bool = false) -> Bool {
        report(.didEndTouch, for: objects, synchronously: synchronously)
    }

    @discardableResult
    public func reportDidEndTouch(_ objects: [AnyObject], synchronously: Bool = false) -> Bool {
        report(.didEndTouch, for: objects, synchronously: synchronously)
    }

    @discardableResult
    public func reportDidBeginScroll(_ objects: AnyObject..., synchronously: Bool = false) -> Bool {
        report(.didBeginScroll, for: objects, synchronously: synchronously)
    }

    @discardableResult
    public func reportDidBeginScroll(_ objects: [AnyObject], synchronously: Bool = false) -> Bool {
        report(.didBeginScroll, for: objects, synchronously: synchronously)
    }

    @discardableResult
    public func reportDidBecomeFirstResponder(_ objects: AnyObject..., synchronously: Bool = false) -> Bool {
        report(.didBecomeFirstResponder, for: objects, synchronously: synchronously)
    }

    @discardableResult
    public func reportDidBecomeFirstResponder(_ objects: [AnyObject], synchronously: Bool = false) -> Bool {
        report(.didBecomeFirstResponder, for: objects, synchronously: synchronously)
    }

    @discardableResult
    public func reportDidResignFirstResponder(_ objects: AnyObject..., synchronously: Bool = false) -> Bool {
        report(.didResignFirstResponder, for: objects, synchronously: synchronously)
    }

    @discardableResult
    public func reportDidResignFirstResponder(_ objects: [AnyObject], synchronously: Bool = false) -> Bool {
        report(.didResignFirstResponder, for: objects, synchronously: synchronously)
    }

    @discardableResult
    public func reportTargetAction(_ objects: AnyObject..., synchronously: Bool = false) -> Bool {
        report(.targetAction, for: objects, synchronously: synchronously)
    }

    @discardableResult
    public func reportTargetAction(_ objects: [AnyObject], synchronously: Bool = false) -> Bool {
        report(.targetAction, for: objects, synchronously: synchronously)
    }
}
