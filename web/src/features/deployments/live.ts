import { useEffect } from 'react';
import { useQueryClient } from '@tanstack/react-query';
import type { TDeployment, TDeploymentDetail } from '@vdi/contracts';
import { currentSocket, onEvent } from '../../lib/socket';
import { DEPLOYMENTS_KEY, deploymentKey } from './api';
import { mergeDetail, removeDeployment, removeDesktop, upsertDeployment, upsertDesktop, withCreation } from './logic';

/**
 * Keeps the deployments list and the open deployment in step with the live socket:
 * deployments_* and deployment_* (the deployment), deploymentdesktop_* (its desktops),
 * creating_desktops / end_creating_desktops (the creation job's progress).
 */
export function useDeploymentsLive(openId?: string) {
  const qc = useQueryClient();
  useEffect(() => {
    const setList = (fn: (l: TDeployment[] | undefined) => TDeployment[]) => {
      if (qc.getQueryData(DEPLOYMENTS_KEY) !== undefined) qc.setQueryData<TDeployment[]>(DEPLOYMENTS_KEY, fn);
    };
    const setDetail = (id: string, fn: (d: TDeploymentDetail | undefined) => TDeploymentDetail | undefined) =>
      qc.setQueryData<TDeploymentDetail>(deploymentKey(id), fn);
    const upsert = (d: TDeployment) => {
      if (!d || typeof d.id !== 'string') return;
      setList((l) => upsertDeployment(l, d));
      setDetail(d.id, (old) => mergeDetail(old, d));
    };
    const remove = ({ id }: { id: string }) => {
      setList((l) => removeDeployment(l, id));
      if (id === openId) void qc.invalidateQueries({ queryKey: deploymentKey(id) });
    };
    const offs = [
      onEvent('deployments_add', upsert),
      onEvent('deployments_update', upsert),
      onEvent('deployment_update', upsert),
      onEvent('deployments_delete', remove),
      onEvent('deployment_delete', remove),
      onEvent('deploymentdesktop_add', (d) => setDetail(d.deployment_id, (old) => upsertDesktop(old, d))),
      onEvent('deploymentdesktop_update', (d) => setDetail(d.deployment_id, (old) => upsertDesktop(old, d))),
      onEvent('deploymentdesktop_delete', (ev) => setDetail(ev.deployment_id, (old) => removeDesktop(old, ev))),
      onEvent('creating_desktops', (ev) => {
        setList((l) => (l ?? []).map((d) => withCreation(d, ev, false)));
        setDetail(ev.deployment_id, (old) => (old ? withCreation(old, ev, false) : old));
      }),
      onEvent('end_creating_desktops', (ev) => {
        setList((l) => (l ?? []).map((d) => withCreation(d, ev, true)));
        setDetail(ev.deployment_id, (old) => (old ? withCreation(old, ev, true) : old));
        // The counts and the desktops as they are now.
        void qc.invalidateQueries({ queryKey: deploymentKey(ev.deployment_id) });
        void qc.invalidateQueries({ queryKey: DEPLOYMENTS_KEY });
      }),
    ];
    // After a reconnection, events may have been missed: read again.
    const socket = currentSocket();
    const refresh = () => {
      void qc.invalidateQueries({ queryKey: DEPLOYMENTS_KEY });
      if (openId) void qc.invalidateQueries({ queryKey: deploymentKey(openId) });
    };
    socket?.io.on('reconnect', refresh);
    return () => {
      offs.forEach((off) => off());
      socket?.io.off('reconnect', refresh);
    };
  }, [qc, openId]);
}
