package mcpsource

// LineMax is the longest stderr line logged whole, for the tests outside.
const LineMax = lineMax
