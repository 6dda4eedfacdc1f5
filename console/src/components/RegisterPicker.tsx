// Finding registers: by meter or register name or externalId, within what the token may see
// (GET /api/meter). Selected registers are listed with their kind; a virtual register can bring
// its sources along (a baseline brings the register it is the baseline of).
import { useMemo, useState } from 'preact/hooks';
import type { Meter, Register } from '../api/types.ts';
import { registerLabel } from '../data/units.ts';

interface Props {
  meters: readonly Meter[];
  registers: readonly Register[];
  selected: readonly number[];
  onChange: (ids: number[]) => void;
}

const SHOWN = 100;

export function kindOf(register: Register): string {
  if (!register.isVirtual) return 'measured';
  const calc = register.virtualDefinition?.calculationType;
  return calc === 3 ? 'baseline' : calc === 2 ? 'constant' : 'virtual';
}

export function RegisterPicker({ meters, registers, selected, onChange }: Props) {
  const [text, setText] = useState('');
  const meterById = useMemo(() => new Map(meters.map((m) => [m.id, m])), [meters]);
  const byId = useMemo(() => new Map(registers.map((r) => [r.id, r])), [registers]);
  const matches = useMemo(() => {
    const q = text.trim().toLowerCase();
    if (!q) return registers;
    return registers.filter((r) => {
      const m = meterById.get(r.meterId);
      return [r.name, r.externalId, m?.name, m?.externalId, String(r.id)].some((s) => s?.toLowerCase().includes(q));
    });
  }, [text, registers, meterById]);
  const chosen = new Set(selected);
  const toggle = (id: number) => onChange(chosen.has(id) ? selected.filter((s) => s !== id) : [...selected, id]);
  const addSources = (r: Register) => onChange([...selected, ...(r.virtualDefinition?.sourceRegisters ?? []).filter((s) => !chosen.has(s))]);

  return (
    <div class="register-picker">
      <input type="search" placeholder="Find registers by meter or register name or externalId" value={text} onInput={(e) => setText((e.currentTarget as HTMLInputElement).value)} data-testid="register-search" />
      <ul class="matches" data-testid="register-matches">
        {matches.slice(0, SHOWN).map((r) => {
          const m = meterById.get(r.meterId);
          return (
            <li>
              <label>
                <input type="checkbox" checked={chosen.has(r.id)} onChange={() => toggle(r.id)} data-register-id={r.id} />
                <span>{registerLabel(r)}</span>
                <span class="muted">
                  {' '}
                  {r.externalId} · meter {m ? `${m.name} (${m.externalId})` : r.meterId} · {kindOf(r)}
                </span>
              </label>
            </li>
          );
        })}
        {matches.length > SHOWN ? <li class="muted">{matches.length - SHOWN} more: refine the search</li> : null}
        {matches.length === 0 ? <li class="muted">No register matches.</li> : null}
      </ul>
      {selected.length > 0 ? (
        <div class="chips" data-testid="selected-registers">
          {selected.map((id) => {
            const r = byId.get(id);
            const sources = r?.virtualDefinition?.sourceRegisters ?? [];
            return (
              <span class="chip">
                {r ? registerLabel(r) : `#${id} (not visible)`}
                {r && sources.some((s) => !chosen.has(s)) ? (
                  <button type="button" class="link" onClick={() => addSources(r)} data-testid={`add-sources-${id}`} title="Overlay the registers this one is computed from">
                    + {kindOf(r) === 'baseline' ? 'actuals' : 'sources'}
                  </button>
                ) : null}
                <button type="button" class="link" aria-label="Remove" onClick={() => toggle(id)}>
                  ×
                </button>
              </span>
            );
          })}
        </div>
      ) : null}
    </div>
  );
}
