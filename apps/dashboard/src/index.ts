export {
  buildDashboard,
  loadDashboardBundle,
  DASHBOARD_PATH,
  type DashboardAsset,
  type DashboardBundle,
} from './build-dashboard.ts';
