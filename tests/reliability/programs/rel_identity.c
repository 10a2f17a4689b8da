// Processes that change identity after heaprec started, as servers do.
//
//   rel_identity drop LOG      a root master forks 2 workers; each switches to nobody (setgid,
//                              then setuid, like nginx), points descriptor 2 at LOG (its own
//                              error log, like nginx), allocates 300 x 2000 bytes at
//                              site_identity_worker and exits; the master allocates 100 x 3000
//                              bytes at site_identity_master and exits after them
//   rel_identity log LOG DIR   points descriptor 2 at LOG, then renames the output directory DIR
//                              away so that the final profile cannot be written: heaprec's
//                              complaint must not land in LOG
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void* g_keep[400];

__attribute__((noinline)) static void site_identity_worker(void) {
  for (int i = 0; i < 300; ++i) {
    g_keep[i] = malloc(2000);
    memset(g_keep[i], 1, 2000);
  }
}

__attribute__((noinline)) static void site_identity_master(void) {
  for (int i = 0; i < 100; ++i) {
    g_keep[i] = malloc(3000);
    memset(g_keep[i], 1, 3000);
  }
}

static void RedirectStderr(const char* log) {
  int fd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0666);
  if (fd < 0 || dup2(fd, 2) < 0) {
    perror("log");
    exit(3);
  }
  close(fd);
}

static int Drop(const char* log) {
  pid_t workers[2];
  for (int w = 0; w < 2; ++w) {
    workers[w] = fork();
    if (workers[w] == 0) {
      if (setgid(65534) != 0 || setuid(65534) != 0) {
        perror("drop privileges");
        _exit(4);
      }
      RedirectStderr(log);
      site_identity_worker();
      printf("worker %d uid %d\n", w, (int)getuid());
      fflush(stdout);
      exit(0);
    }
    int status;  // one at a time: the output stays in order
    if (waitpid(workers[w], &status, 0) != workers[w] || !WIFEXITED(status) ||
        WEXITSTATUS(status) != 0) {
      printf("worker %d failed\n", w);
      return 1;
    }
  }
  site_identity_master();
  printf("master done\n");
  return 0;
}

static int Log(const char* log, const char* dir) {
  RedirectStderr(log);
  site_identity_master();
  char moved[4096];
  snprintf(moved, sizeof(moved), "%s.moved", dir);
  if (rename(dir, moved) != 0) {
    perror("rename");
    return 5;
  }
  printf("logging to my own file\n");
  return 0;
}

int main(int argc, char** argv) {
  if (argc == 3 && strcmp(argv[1], "drop") == 0) return Drop(argv[2]);
  if (argc == 4 && strcmp(argv[1], "log") == 0) return Log(argv[2], argv[3]);
  fprintf(stderr, "usage: rel_identity drop LOG | log LOG DIR\n");
  return 2;
}
