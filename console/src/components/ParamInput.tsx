// A labelled input bound to one query parameter of the page's URL (the views keep their state
// there, so a view can be bookmarked and shared).
import { setParams } from '../app/route.ts';

interface Props {
  label: string;
  /** The URL parameter the input writes when it changes. */
  param: string;
  type: 'date' | 'number';
  value: string | number;
  testId: string;
  min?: number;
  max?: number;
}

export function ParamInput({ label, param, testId, ...input }: Props) {
  return (
    <label>
      {label}
      <input {...input} onChange={(e) => setParams({ [param]: (e.currentTarget as HTMLInputElement).value })} data-testid={testId} />
    </label>
  );
}

/** The first and last day of a period, in the URL's `from` and `to` (ISO dates). */
export function DayRangeInputs({ from, to, testIds }: { from: string; to: string; testIds: readonly [string, string] }) {
  return (
    <>
      <ParamInput label="From" param="from" type="date" value={from} testId={testIds[0]} />
      <ParamInput label="To (inclusive)" param="to" type="date" value={to} testId={testIds[1]} />
    </>
  );
}
