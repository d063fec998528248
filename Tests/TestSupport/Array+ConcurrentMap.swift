extension Array where Element: Sendable {
    /// `transform` of every element, run concurrently (a task each, none for a single element), in the array's
    /// order.
    public func concurrentMap<T: Sendable>(_ transform: @escaping @Sendable (Element) async -> T) async -> [T] {
        if count == 1 { return [await transform(self[0])] }
        return await withTaskGroup(of: (Int, T).self) { group in
            for (index, element) in enumerated() {
                group.addTask { (index, await transform(element)) }
            }
            var results = [T?](repeating: nil, count: count)
            for await (index, result) in group { results[index] = result }
            return results.map { $0! }
        }
    }
}
