/**
 * Loaded with `node --import` into a bot process to put its clock off by GATEHOUSE_TEST_CLOCK_SKEW_MS
 * (negative: behind), as on a machine whose clock is wrong: `Date.now()` and `new Date()` read the
 * shifted time. Timers and `performance.now()` run as before, as they do on such a machine.
 */
const skew = Number(process.env.GATEHOUSE_TEST_CLOCK_SKEW_MS ?? 0);
const RealDate = Date;
const realNow = RealDate.now.bind(RealDate);
const now = () => realNow() + skew;

globalThis.Date = new Proxy(RealDate, {
  construct: (target, args, newTarget) => Reflect.construct(target, args.length > 0 ? args : [now()], newTarget) as object,
  apply: () => new RealDate(now()).toString(),
  get: (target, prop, receiver) => (prop === "now" ? now : Reflect.get(target, prop, receiver)),
});
