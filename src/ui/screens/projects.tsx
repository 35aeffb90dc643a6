// The projects the signed-in user can see, each with its log streams (one click to their traces).
import { api } from '../lib/api.js';
import { formatTime } from '../lib/format.js';
import { Link, navigate, useTitle } from '../lib/router.js';
import { runTable } from '../lib/routes.js';
import { useAsync } from '../lib/use-async.js';
import { Breadcrumbs, ErrorNote, Loading } from '../components/common.js';

interface ProjectItem {
  id: string;
  name: string;
  created_at: string;
  num_logstreams?: number | null;
  num_experiments?: number | null;
  log_streams?: { id: string; name: string }[] | null;
}

interface ProjectsPage {
  projects: ProjectItem[];
  total_count: number;
  next_starting_token: number | null;
}

const PAGE = 50;

export function Projects({ page }: { page: number }) {
  const { data, error, loading } = useAsync(
    (signal) =>
      api<ProjectsPage>(
        'POST',
        `/projects/paginated?include_logstreams=true&starting_token=${(page - 1) * PAGE}&limit=${PAGE}`,
        { sort: { name: 'name', ascending: true, sort_type: 'column' } },
        signal,
      ),
    [page],
  );
  useTitle('Projects');
  return (
    <main class="page">
      <Breadcrumbs items={[{ label: 'Projects' }]} />
      <h1>Projects</h1>
      <ErrorNote error={error} />
      {loading && !data && <Loading what="projects" />}
      {data && data.projects.length === 0 && <Empty />}
      {data && data.projects.length > 0 && (
        <>
          <p class="muted" role="status">
            {data.total_count.toLocaleString('en-US')} project{data.total_count === 1 ? '' : 's'}
          </p>
          <table class="grid projects">
            <thead>
              <tr>
                <th scope="col">Project</th>
                <th scope="col">Log streams</th>
                <th scope="col">Experiments</th>
                <th scope="col">Created</th>
              </tr>
            </thead>
            <tbody>
              {data.projects.map((p) => (
                <tr key={p.id}>
                  <td>
                    <Link to={{ name: 'project', projectId: p.id }} class="strong">
                      {p.name}
                    </Link>
                  </td>
                  <td>
                    <span class="chips">
                      {(p.log_streams ?? []).map((ls) => (
                        <Link key={ls.id} class="chip" to={runTable(p.id, 'ls', ls.id)}>
                          {ls.name}
                        </Link>
                      ))}
                      {(p.log_streams ?? []).length === 0 && <span class="muted">none</span>}
                    </span>
                  </td>
                  <td>
                    {p.num_experiments ? (
                      <Link to={{ name: 'project', projectId: p.id }}>{p.num_experiments}</Link>
                    ) : (
                      <span class="muted">0</span>
                    )}
                  </td>
                  <td class="nowrap">{formatTime(p.created_at)}</td>
                </tr>
              ))}
            </tbody>
          </table>
          {(page > 1 || data.next_starting_token !== null) && (
            <div class="pager">
              <button type="button" disabled={page <= 1} onClick={() => navigate({ name: 'projects', page: page - 1 })}>
                Previous page
              </button>
              <button
                type="button"
                disabled={data.next_starting_token === null}
                onClick={() => navigate({ name: 'projects', page: page + 1 })}
              >
                Next page
              </button>
            </div>
          )}
        </>
      )}
    </main>
  );
}

function Empty() {
  const origin = location.origin;
  return (
    <div class="empty">
      <h2>No projects yet</h2>
      <p>Traces appear here once an application logs them. With the official client, point it at this server:</p>
      <pre class="text">{`export GALILEO_API_URL=${origin}\nexport GALILEO_API_KEY=<the key you signed in with>`}</pre>
      <p>
        or log with the library: <code>store.logTraces(...)</code> (see the README).
      </p>
    </div>
  );
}
