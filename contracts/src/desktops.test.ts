import { describe, expect, it } from 'vitest';
import {
  AT_REST, CREATING, FORCE_STOPPABLE, GOING_UP, GUEST_UP, ON_HYPERVISOR, REACHABLE, RETRYABLE, RUNNING_STATUSES, STARTABLE, STOPPABLE, VIEWABLE,
  desktopState, offeredAction, statusIn, type TDomainStatus,
} from './desktops';

const sorted = (xs: readonly TDomainStatus[]) => [...xs].sort();

describe('the status sets of the server checks', () => {
  it('are read off the state → action table', () => {
    for (const s of STARTABLE) expect(offeredAction(desktopState(s), true)).toBe('start');
    for (const s of STOPPABLE) expect(offeredAction(desktopState(s), true)).toBe('stop');
    for (const s of FORCE_STOPPABLE) expect(offeredAction(desktopState(s), true)).toBe('forceStop');
    for (const s of RETRYABLE) expect(offeredAction(desktopState(s), true)).toBe('retry');
  });

  it('are the statuses the checks used before the table', () => {
    expect(sorted(STARTABLE)).toEqual(['Stopped']);
    expect(sorted(STOPPABLE)).toEqual(sorted(['Started', 'WaitingIP', 'Paused']));
    expect(sorted(FORCE_STOPPABLE)).toEqual(['Shutting-down']);
    expect(sorted(RETRYABLE)).toEqual(['Failed']);
    expect(sorted(AT_REST)).toEqual(sorted(['Stopped', 'Failed']));
    expect(sorted(VIEWABLE)).toEqual(sorted(['Started', 'WaitingIP', 'Shutting-down', 'Paused']));
    expect(sorted(ON_HYPERVISOR)).toEqual(sorted(['Started', 'WaitingIP', 'Paused', 'Shutting-down', 'Stopping']));
    expect(sorted(CREATING)).toEqual(sorted(['Creating', 'CreatingAndStarting']));
    expect(sorted(GOING_UP)).toEqual(sorted(['Starting', 'CreatingAndStarting']));
    expect(sorted(GUEST_UP)).toEqual(sorted(['Started', 'WaitingIP']));
    expect(sorted(REACHABLE)).toEqual(['Started']);
    expect(sorted(RUNNING_STATUSES)).toEqual(sorted(['Starting', 'Started', 'WaitingIP', 'Shutting-down', 'CreatingAndStarting']));
  });

  it('answer for a plain string', () => {
    expect(statusIn(AT_REST, 'Failed')).toBe(true);
    expect(statusIn(AT_REST, 'stopped')).toBe(false);
  });
});
